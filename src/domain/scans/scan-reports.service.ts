// Scans whose findings come from a scanner's report uploaded by CI (CONTRACT §11). The report is
// read before this is called; here it becomes a scan that starts and completes in one transaction,
// with the same events, dedup, auto-resolve and policy verdict as an engine's scan. Never a 409:
// the scan is never `queued` or `running` where the one-active-scan index could see it.
import { z } from "zod";
import { requireScope } from "../../auth/scopes.ts";
import { isForeignKeyViolation } from "../../db/client.ts";
import { recordEvent } from "../../events/outbox.ts";
import { notFound } from "../../errors.ts";
import type { Scan } from "../../generated/prisma/client.ts";
import { isId, newId } from "../../ids.ts";
import type { ServiceContext } from "../context.ts";
import { parseInput } from "../validation.ts";
import type { Finding } from "../vulnerabilities/finding.ts";
import { finishScan } from "./scan-lifecycle.ts";
import { toScanEventData } from "./scan.view.ts";
import { SCAN_TYPES, type ReportFormat } from "./scans.schemas.ts";

/** A report as its parser read it. */
export interface ScanReport {
  format: ReportFormat;
  tool: string;
  toolVersion: string | null;
  /** The type the report implies; the upload's `scanType` wins over it. */
  scanType: (typeof SCAN_TYPES)[number];
  findings: Finding[];
}

export const reportUploadQuerySchema = z.strictObject({
  scanType: z.enum(SCAN_TYPES).optional(),
  triggeredBy: z.string().min(1).max(200).optional(),
});

export async function ingestReport(ctx: ServiceContext, applicationId: string, report: ScanReport, query: unknown): Promise<Scan> {
  const actor = requireScope(ctx.actor, "scans:write");
  const options = parseInput(reportUploadQuerySchema, query, "Query parameters");
  if (!isId(applicationId)) throw notFound("Application");
  const now = new Date();
  try {
    return await ctx.db.$transaction(async (tx) => {
      const scan = await tx.scan.create({
        data: {
          id: newId(),
          applicationId,
          scanType: options.scanType ?? report.scanType,
          status: "completed",
          triggeredBy: options.triggeredBy ?? actor.sub,
          createdAt: now,
          startedAt: now,
          completedAt: now,
          sourceKind: "report",
          sourceFormat: report.format,
          sourceTool: report.tool,
          sourceToolVersion: report.toolVersion,
        },
      });
      const started = { ...scan, status: "running" as const, completedAt: null };
      await recordEvent(tx, "scan.started", toScanEventData(started), { applicationId });
      return finishScan(tx, scan, report.findings);
    }, { timeout: 120_000 });
  } catch (err) {
    if (isForeignKeyViolation(err)) throw notFound("Application");
    throw err;
  }
}
