import { z } from "zod";
import { vulnerabilityFilterSchema } from "../../domain/vulnerabilities/vulnerabilities.schemas.ts";
import { slaEvaluator } from "../../domain/sla/sla.service.ts";
import * as vulnerabilities from "../../domain/vulnerabilities/vulnerabilities.service.ts";
import { toVulnerabilityView, vulnerabilityViewSchema } from "../../domain/vulnerabilities/vulnerability.view.ts";
import {
  toVulnerabilityChangeView,
  vulnerabilityChangeViewSchema,
} from "../../domain/vulnerabilities/vulnerability-change.view.ts";
import { trendQuerySchema, vulnerabilityTrend } from "../../domain/vulnerabilities/vulnerability-trend.ts";
import {
  toVulnerabilityTrendView,
  vulnerabilityTrendViewSchema,
} from "../../domain/vulnerabilities/vulnerability-trend.view.ts";
import { pageQueryShape, pageRequestOf, sendPage, singleQuery } from "../list-response.ts";
import type { RouteDefinition } from "../route.ts";

export const vulnerabilityRoutes: RouteDefinition[] = [
  {
    operationId: "ListApplicationVulnerabilities",
    method: "GET",
    path: "/applications/{id}/vulnerabilities",
    summary: "List an application's vulnerabilities, newest first",
    description:
      "The application's vulnerabilities (deduplicated across scans), newest first, filtered by severity, status, tool and remediation deadline, in pages of `limit` with a `Link` header to the next one.",
    tag: "Vulnerabilities",
    scope: "vulnerabilities:read",
    query: z.object({
      severity: vulnerabilityFilterSchema.shape.severity.describe("Exact severity; another value is 400"),
      status: vulnerabilityFilterSchema.shape.status.describe("Exact status; another value is 400"),
      tool: vulnerabilityFilterSchema.shape.tool.describe(
        "The tool that reported them, e.g. Semgrep or simulator (extension)",
      ),
      sla: vulnerabilityFilterSchema.shape.sla.describe(
        "Open or in-progress ones by where they stand against their remediation deadline (extension, CONTRACT §19)",
      ),
      ...pageQueryShape,
    }),
    success: {
      status: 200,
      description: "A page of vulnerabilities",
      schema: z.array(vulnerabilityViewSchema),
      headers: ["Link"],
    },
    errors: [400, 404],
    async handle(ctx, svc) {
      const page = pageRequestOf(ctx);
      const filter = {
        severity: singleQuery(ctx, "severity"),
        status: singleQuery(ctx, "status"),
        tool: singleQuery(ctx, "tool"),
        sla: singleQuery(ctx, "sla"),
      };
      const found = await vulnerabilities.listApplicationVulnerabilities(svc, ctx.params.id!, filter, page);
      const slaOf = await slaEvaluator(svc.pool, [ctx.params.id!]);
      sendPage(ctx, found, page.limit, (v) => toVulnerabilityView(v, slaOf(v)));
    },
  },
  {
    operationId: "GetApplicationVulnerability",
    method: "GET",
    path: "/applications/{id}/vulnerabilities/{vulnerabilityId}",
    summary: "Get one vulnerability, with its analysis (extension)",
    description:
      "One vulnerability with its VEX analysis (state, justification, response) and its remediation deadline.",
    tag: "Vulnerabilities",
    scope: "vulnerabilities:read",
    success: { status: 200, description: "The vulnerability", schema: vulnerabilityViewSchema },
    errors: [404],
    async handle(ctx, svc) {
      const found = await vulnerabilities.getApplicationVulnerability(svc, ctx.params.id!, ctx.params.vulnerabilityId!);
      ctx.body = toVulnerabilityView(found, (await slaEvaluator(svc.pool, [found.applicationId]))(found));
    },
  },
  {
    operationId: "GetVulnerabilityHistory",
    method: "GET",
    path: "/applications/{id}/vulnerabilities/{vulnerabilityId}/history",
    summary: "Every change of the vulnerability's status, oldest first: by scans, reports and VEX (extension)",
    description:
      "Every change of the vulnerability's status and analysis, oldest first, each with what made it (a scan, a report, a VEX document) and who.",
    tag: "Vulnerabilities",
    scope: "vulnerabilities:read",
    success: { status: 200, description: "The changes, oldest first", schema: z.array(vulnerabilityChangeViewSchema) },
    errors: [404],
    async handle(ctx, svc) {
      ctx.body = (await vulnerabilities.vulnerabilityHistory(svc, ctx.params.id!, ctx.params.vulnerabilityId!)).map(
        toVulnerabilityChangeView,
      );
    },
  },
  {
    operationId: "GetVulnerabilityTrend",
    method: "GET",
    path: "/applications/{id}/vulnerability-trend",
    summary:
      "Open vulnerabilities (open or in_progress) per severity over time, from their history of changes (extension)",
    description:
      "One point at the end of each bucket after `from`, the last at `to`: how many of the application's vulnerabilities were open then. " +
      "Default: the last 30 days, a point a day. At most 366 points; more, or `from` not before `to`, is 400.",
    tag: "Vulnerabilities",
    scope: "vulnerabilities:read",
    query: z.object({
      from: z.iso.datetime({ offset: true }).optional().describe(trendQuerySchema.shape.from.description!),
      to: z.iso.datetime({ offset: true }).optional().describe(trendQuerySchema.shape.to.description!),
      bucket: trendQuerySchema.shape.bucket,
    }),
    success: { status: 200, description: "The points, oldest first", schema: vulnerabilityTrendViewSchema },
    errors: [400, 404],
    async handle(ctx, svc) {
      const query = { from: singleQuery(ctx, "from"), to: singleQuery(ctx, "to"), bucket: singleQuery(ctx, "bucket") };
      ctx.body = toVulnerabilityTrendView(await vulnerabilityTrend(svc, ctx.params.id!, query));
    },
  },
];
