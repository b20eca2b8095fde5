// VEX in and out (docs/spec/CONTRACT.md §13): a document's statements applied to an application's
// vulnerabilities, and the decisions in force exported as OpenVEX or CycloneDX.
import type Koa from "koa";
import { z } from "zod";
import type { ServiceContext } from "../../domain/context.ts";
import { parseInput } from "../../domain/validation.ts";
import { vexOutcomeSchema } from "../../domain/vulnerabilities/vex-outcome.view.ts";
import { VEX_FORMATS } from "../../domain/vulnerabilities/vex-statement.ts";
import * as vex from "../../domain/vulnerabilities/vex.service.ts";
import { invalid, notFound } from "../../errors.ts";
import { readVexOffThread } from "../../scans/reports/read-report-off-thread.ts";
import { CYCLONEDX_MEDIA_TYPE, toCycloneDxVex } from "../../vex/cyclonedx-vex-export.ts";
import { toOpenVex } from "../../vex/openvex-export.ts";
import { singleQuery } from "../list-response.ts";
import { httpProblem } from "../problem.ts";
import { readDocumentBody, type DocumentBody } from "../report-body.ts";
import type { RouteDefinition } from "../route.ts";

/**
 * 16 MiB: a VEX of 10,000 statements is 3 to 6 MiB (OpenVEX, CycloneDX with its components), so
 * this leaves room for some 30,000; larger sets of decisions go in several documents.
 */
export const MAX_VEX_BYTES = 16 * 1024 * 1024;
const VEX_BODY: DocumentBody = {
  what: "VEX document",
  mediaTypes: ["application/json", "application/vnd.cyclonedx+json", "application/*+json"],
  limit: MAX_VEX_BYTES,
};

const formatQuery = z.enum(VEX_FORMATS);

/** The request's VEX document, read off the event loop. */
async function readVex(ctx: Koa.Context, svc: ServiceContext, format: string | undefined) {
  const read = await readVexOffThread(await readDocumentBody(ctx, VEX_BODY), format, svc.pool);
  if (!read.ok)
    throw read.problem === "malformed_json"
      ? httpProblem("malformed_json", read.message)
      : invalid(read.message, read.errors);
  return read.document;
}

const TOOL = { name: "appsec-service", version: "0.1.0" };

export const vexRoutes: RouteDefinition[] = [
  {
    operationId: "ApplyVex",
    method: "POST",
    path: "/applications/{id}/vex",
    summary:
      "Apply a VEX document to the application's vulnerabilities: OpenVEX 0.2.0 or CycloneDX 1.4–1.6 (extension)",
    description:
      "Statements match vulnerabilities by id (aliases included) and, when they name products, by package URL without qualifiers. " +
      "not_affected/false_positive → accepted, under_investigation/in_triage → in_progress, affected/exploitable → open, fixed/resolved → resolved. " +
      "A statement that matches nothing yet is kept and applied when a finding with its id appears. Up to 16 MiB; Content-Encoding: gzip accepted.",
    tag: "Vulnerabilities",
    scope: "vulnerabilities:triage",
    query: z.object({
      format: formatQuery.optional().describe("The document's format; detected from it when omitted"),
      expiresAt: z.iso
        .datetime({ offset: true })
        .optional()
        .describe(
          "When the document's accepting decisions (not_affected, false_positive) end: the vulnerabilities are open again then (extension, CONTRACT §19)",
        ),
    }),
    body: z
      .looseObject({})
      .describe("An OpenVEX 0.2.0 document, or a CycloneDX 1.4–1.6 BOM whose vulnerabilities carry analysis"),
    bodyMediaTypes: VEX_BODY.mediaTypes,
    success: { status: 200, description: "What the statements did", schema: vexOutcomeSchema },
    errors: [400, 404, 413, 415],
    async handle(ctx, svc) {
      const format = singleQuery(ctx, "format");
      const expiresAt = singleQuery(ctx, "expiresAt");
      ctx.body = await vex.applyVex(svc, ctx.params.id!, () => readVex(ctx, svc, format), {
        ...(expiresAt !== undefined && { expiresAt }),
      });
    },
  },
  {
    operationId: "ExportVex",
    method: "GET",
    path: "/applications/{id}/vex",
    summary: "The decisions in force on the application's vulnerabilities as a VEX document (extension)",
    description:
      "Every vulnerability with an analysis, as OpenVEX 0.2.0 (default) or CycloneDX 1.6. Importing it into another application with the " +
      "same findings gives the same statuses. OpenVEX needs a statement: with no decision in force its export is 404.",
    tag: "Vulnerabilities",
    scope: "vulnerabilities:read",
    query: z.object({ format: formatQuery.default("openvex").describe("openvex (default) or cyclonedx") }),
    success: {
      status: 200,
      description: "The VEX document",
      schema: z.looseObject({}),
      alsoAs: [CYCLONEDX_MEDIA_TYPE],
    },
    errors: [400, 404],
    async handle(ctx, svc) {
      const { format } = parseInput(
        z.object({ format: formatQuery.default("openvex") }),
        { format: singleQuery(ctx, "format") },
        "Query parameters",
      );
      const { application, vulnerabilities } = await vex.decisionsInForce(svc, ctx.params.id!);
      const header = { application, tool: TOOL, at: new Date() };
      if (format === "cyclonedx") {
        ctx.type = CYCLONEDX_MEDIA_TYPE;
        ctx.body = toCycloneDxVex(header, vulnerabilities);
        return;
      }
      const document = toOpenVex(header, vulnerabilities);
      if ((document.statements as unknown[]).length === 0)
        throw notFound("A decision to export (OpenVEX needs at least one statement)");
      ctx.body = document;
    },
  },
];
