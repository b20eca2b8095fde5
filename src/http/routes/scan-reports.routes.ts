import type Koa from "koa";
import { z } from "zod";
import { completeScanWithReport, ingestReport, type ScanReport } from "../../domain/scans/scan-reports.service.ts";
import { scanViewSchema, toScanView } from "../../domain/scans/scan.view.ts";
import { reportLeaseQuerySchema } from "../../domain/scans/scan-jobs.schemas.ts";
import { REPORT_FORMATS, SCAN_TYPES } from "../../domain/scans/scans.schemas.ts";
import { readReportOffThread } from "../../scans/reports/read-report-off-thread.ts";
import { invalid } from "../../errors.ts";
import type { Scan } from "../../generated/prisma/client.ts";
import { singleQuery } from "../list-response.ts";
import { httpProblem } from "../problem.ts";
import { readReportBody, REPORT_MEDIA_TYPES } from "../report-body.ts";
import type { RouteDefinition } from "../route.ts";

/** What both doors for reports take: the report as the body, its format and the scan's details. */
const reportRequest = {
  tag: "Scans",
  scope: "scans:write",
  query: z.object({
    format: z.enum(REPORT_FORMATS).optional().describe("The report's format; detected from the document when omitted"),
    scanType: z.enum(SCAN_TYPES).optional().describe("Defaults to what the report implies (CONTRACT §11)"),
    triggeredBy: z.string().optional().describe("Who or what sent it (default: the token's subject)"),
    checkoutPath: z
      .string()
      .optional()
      .describe(
        "Where the repository was checked out when the tool ran: absolute file:// locations under it become relative (as upload-sarif's checkout_path)",
      ),
  }),
  body: z
    .looseObject({})
    .describe("The scanner's report, as the tool wrote it: up to 50 MiB uncompressed; Content-Encoding: gzip accepted"),
  bodyMediaTypes: REPORT_MEDIA_TYPES,
  success: {
    status: 202,
    description: "The scan, completed from the report (on the scan route, failed when the report says its tool failed)",
    schema: scanViewSchema,
    headers: ["Location"],
  },
} satisfies Partial<RouteDefinition>;

/** Records the request's report with `record`; the report's findings are read while it runs. */
async function withReport(
  ctx: Koa.Context,
  record: (report: ScanReport, query: Record<string, unknown>) => Promise<Scan>,
): Promise<Scan> {
  const read = await readReportOffThread(await readReportBody(ctx), singleQuery(ctx, "format"), {
    checkoutPath: singleQuery(ctx, "checkoutPath"),
  });
  if (!read.ok)
    throw read.problem === "malformed_json"
      ? httpProblem("malformed_json", read.message)
      : invalid(read.message, read.errors);
  try {
    return await record(read.report, {
      scanType: singleQuery(ctx, "scanType"),
      triggeredBy: singleQuery(ctx, "triggeredBy"),
    });
  } finally {
    read.close();
  }
}

function sendScan(ctx: Koa.Context, scan: Scan): void {
  ctx.status = 202;
  ctx.set("Location", `/applications/${scan.applicationId}/scans/${scan.id}`);
  ctx.body = toScanView(scan);
}

export const scanReportRoutes: RouteDefinition[] = [
  {
    ...reportRequest,
    operationId: "UploadScanReport",
    method: "POST",
    path: "/applications/{id}/scan-reports",
    summary: "Record a scan from a scanner's report: SARIF, CycloneDX, Trivy, Grype or ZAP JSON (extension)",
    description:
      "The report becomes a scan with the same events, dedup, auto-resolve (per tool, within the parts the report covered) and policy evaluation as any other. " +
      "A report that says its tool failed (every SARIF run failed, a ZAP report with no site) creates no scan: 422 tool_failed, its errors[].path pointing at where the report says so.",
    errors: [400, 404, 413, 415, 422],
    async handle(ctx, svc) {
      sendScan(ctx, await withReport(ctx, (report, query) => ingestReport(svc, ctx.params.id!, report, query)));
    },
  },
  {
    ...reportRequest,
    operationId: "CompleteScanWithReport",
    method: "POST",
    path: "/applications/{id}/scans/{scanId}/report",
    summary: "Complete a triggered scan of an external type (SCAN_ENGINES) with its scanner's report (extension)",
    description:
      "409 when the scan is already completed or failed, or its type runs on the built-in engine. " +
      "A report that says its tool failed fails the scan instead (202, status failed, failure.reason what the report said; scan.failed), resolving nothing. " +
      "An agent's token (scans:run without scans:write) completes only the scan it holds (409 when its lease was lost).",
    // An agent's token may complete the scan it holds (the service decides which): scans:write or scans:run.
    scope: undefined,
    anyScope: ["scans:write", "scans:run"],
    query: reportRequest.query.extend({
      leaseId: reportLeaseQuerySchema.shape.leaseId.describe(
        "The claim's leaseId: complete the scan only while that claim holds it",
      ),
    }),
    errors: [400, 404, 409, 413, 415],
    async handle(ctx, svc) {
      sendScan(
        ctx,
        await withReport(ctx, (report, query) =>
          completeScanWithReport(svc, ctx.params.id!, ctx.params.scanId!, report, {
            ...query,
            leaseId: singleQuery(ctx, "leaseId"),
          }),
        ),
      );
    },
  },
];
