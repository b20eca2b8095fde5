import { z } from "zod";
import { ingestReport } from "../../domain/scans/scan-reports.service.ts";
import { scanViewSchema, toScanView } from "../../domain/scans/scan.view.ts";
import { REPORT_FORMATS, SCAN_TYPES } from "../../domain/scans/scans.schemas.ts";
import { readReport } from "../../scans/reports/read-report.ts";
import { singleQuery } from "../list-response.ts";
import { readReportBody, REPORT_MEDIA_TYPES } from "../report-body.ts";
import type { RouteDefinition } from "../route.ts";

export const scanReportRoutes: RouteDefinition[] = [
  {
    operationId: "UploadScanReport",
    method: "POST",
    path: "/applications/{id}/scan-reports",
    summary: "Record a scan from a scanner's report: SARIF, CycloneDX, Trivy, Grype or ZAP JSON (extension)",
    description:
      "The body is the report as the tool wrote it (up to 50 MiB uncompressed; Content-Encoding: gzip accepted). " +
      "It becomes a scan with the same events, dedup, auto-resolve (per tool) and policy evaluation as any other.",
    tag: "Scans",
    scope: "scans:write",
    query: z.object({
      format: z.enum(REPORT_FORMATS).optional().describe("The report's format; detected from the document when omitted"),
      scanType: z.enum(SCAN_TYPES).optional().describe("Defaults to what the report implies (CONTRACT §11)"),
      triggeredBy: z.string().optional().describe("Who or what sent it (default: the token's subject)"),
    }),
    body: z.looseObject({}).describe("The scanner's report"),
    bodyMediaTypes: REPORT_MEDIA_TYPES,
    success: { status: 202, description: "The scan the report became", schema: scanViewSchema, headers: ["Location"] },
    errors: [400, 404, 413, 415],
    async handle(ctx, svc) {
      const format = singleQuery(ctx, "format");
      const report = readReport(await readReportBody(ctx), format);
      const query = { scanType: singleQuery(ctx, "scanType"), triggeredBy: singleQuery(ctx, "triggeredBy") };
      const scan = await ingestReport(svc, ctx.params.id!, report, query);
      ctx.status = 202;
      ctx.set("Location", `/applications/${scan.applicationId}/scans/${scan.id}`);
      ctx.body = toScanView(scan);
    },
  },
];
