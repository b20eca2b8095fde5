// Scans whose findings come from a scanner's report sent by CI (docs/spec/CONTRACT.md §11). The report is read
// before this is called; here it completes a scan in one transaction, with the same events, dedup,
// auto-resolve and policy verdict as an engine's scan: either a new scan (an upload, never a 409:
// it is never `queued` or `running` where the one-active-scan index could see it), or a triggered
// scan of an external type that was waiting for it, queued or held by an agent (docs/spec/CONTRACT.md §12).
// A report that says its tool failed completes nothing and resolves nothing: the scan it was to
// fulfil fails with what the report said, and an upload that would create a scan is refused.
import { z } from "zod";
import { hasScope, requireScope, type Actor } from "../../auth/scopes.ts";
import { isForeignKeyViolation } from "../../db/client.ts";
import { recordEvent } from "../../events/outbox.ts";
import type { Tx } from "../../db/client.ts";
import { conflict, invalid, notFound, toolFailed, type FieldError } from "../../errors.ts";
import type { Scan } from "../../generated/prisma/client.ts";
import { isId, newId } from "../../ids.ts";
import type { ServiceContext } from "../context.ts";
import { viewerTeams } from "../access/viewer.ts";
import { requireApplication, requireApplicationIfConfined } from "../applications/require-application.ts";
import { parseInput } from "../validation.ts";
import type { FindingBatches, ReportCoverage } from "../vulnerabilities/finding.ts";
import { lockHeldScan, whyNotHeld, type LeaseHolder } from "./agent-leases.ts";
import { reportLeaseQuerySchema } from "./scan-jobs.schemas.ts";
import { finishScan, markFailed } from "./scan-lifecycle.ts";
import { toScanEventData } from "./scan.view.ts";
import { SCAN_TYPES, type ReportFormat, type ScanType } from "./scans.schemas.ts";

/** A report as its parser read it (src/scans/reports/). */
export interface ScanReport {
  format: ReportFormat;
  /** The tool that wrote the report, as it names itself (`Semgrep`, `CodeQL`, `Trivy`, …). */
  tool: string;
  toolVersion: string | null;
  /** The type the report implies (docs/spec/CONTRACT.md §11); the upload's `scanType` wins over it. */
  scanType: ScanType;
  /** One per result, informational ones already left out; the same fingerprint may come twice. */
  findings: FindingBatches;
  /** Set when the report says its tool failed (every SARIF run failed): it then has no findings. */
  failure: ReportFailure | null;
  /** Which of the tool's earlier findings it may resolve: the parts it covered that completed. */
  coverage: ReportCoverage;
}

/** What a report says of its tool's failure: `reason` in a sentence, `errors` where it says so (JSON Pointers). */
export interface ReportFailure {
  reason: string;
  errors: FieldError[];
}

/** A report of 100,000 findings takes seconds to record, far beyond the default 5 s. */
const REPORT_TRANSACTION = { timeout: 120_000 };

export const reportUploadQuerySchema = z.strictObject({
  scanType: z.enum(SCAN_TYPES).optional(),
  triggeredBy: z.string().min(1).max(200).optional(),
});

/** scan.started as the scan's `running` moment, then everything completing it writes. */
async function startAndFinish(tx: Tx, scan: Scan, report: ScanReport): Promise<Scan> {
  const started = { ...scan, status: "running" as const, completedAt: null };
  await recordEvent(tx, "scan.started", toScanEventData(started), { applicationId: scan.applicationId });
  return finishScan(tx, scan, report.findings, report.coverage);
}

const sourceOf = (report: ScanReport) => ({
  sourceKind: "report" as const,
  sourceFormat: report.format,
  sourceTool: report.tool,
  sourceToolVersion: report.toolVersion,
});

export async function ingestReport(
  ctx: ServiceContext,
  applicationId: string,
  report: ScanReport,
  query: unknown,
): Promise<Scan> {
  const actor = requireScope(ctx.actor, "scans:write");
  const options = parseInput(reportUploadQuerySchema, query, "Query parameters");
  if (!isId(applicationId)) throw notFound("Application");
  if (report.failure) {
    // No scan is created for a tool that did not scan: the caller learns why (422), or of a wrong id first.
    await requireApplication(ctx.db, actor, applicationId);
    throw toolFailed(report.failure.reason, report.failure.errors);
  }
  await requireApplicationIfConfined(ctx.db, actor, applicationId);
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
          ...sourceOf(report),
        },
      });
      return startAndFinish(tx, scan, report);
    }, REPORT_TRANSACTION);
  } catch (err) {
    if (isForeignKeyViolation(err)) throw notFound("Application");
    throw err;
  }
}

const completeQuerySchema = reportUploadQuerySchema.extend(reportLeaseQuerySchema.shape);

/**
 * Who may complete a triggered scan with its report. `scans:write` (CI): any scan of an external
 * type still queued or running. `scans:run` alone (an agent): only a scan it holds, a live lease of
 * its token's subject (and of that very claim when `leaseId` is given), so an agent's token needs
 * nothing beyond `scans:run` to finish its own work and can complete no other scan. Naming a
 * `leaseId` holds a `scans:write` caller to that lease as well.
 */
const isAgentOnly = (actor: Actor | undefined): actor is Actor =>
  actor !== undefined && !hasScope(actor, "scans:write") && hasScope(actor, "scans:run");

/**
 * Completes a triggered scan of an external type (SCAN_ENGINES) with its report, or fails it
 * (scan.failed, the report's words its failure.reason) when the report says its tool failed: `409` when it is
 * already completed or failed, its type runs on the built-in engine, or the caller must hold its
 * lease and does not (isAgentOnly). The scan row is locked first, so of two reports for one scan
 * exactly one completes it.
 */
export async function completeScanWithReport(
  ctx: ServiceContext,
  applicationId: string,
  scanId: string,
  report: ScanReport,
  query: unknown,
): Promise<Scan> {
  const actor = isAgentOnly(ctx.actor) ? ctx.actor : requireScope(ctx.actor, "scans:write");
  const options = parseInput(completeQuerySchema, query, "Query parameters");
  // The lease the caller must hold, or null when it need hold none.
  const lease: LeaseHolder | null =
    isAgentOnly(actor) || options.leaseId !== undefined ? { owner: actor.sub, leaseId: options.leaseId } : null;
  if (!isId(applicationId) || !isId(scanId)) throw notFound("Scan");
  const teams = viewerTeams(actor);
  return ctx.db.$transaction(async (tx) => {
    const locked = await tx.$queryRaw<unknown[]>`
      SELECT 1 FROM scans WHERE id = ${scanId}::uuid AND application_id = ${applicationId}::uuid
         AND (${teams}::text[] IS NULL
              OR EXISTS (SELECT 1 FROM applications a WHERE a.id = ${applicationId}::uuid AND a.owner = ANY(${teams}::text[])))
         FOR UPDATE`;
    if (locked.length === 0) throw notFound("Scan");
    const scan = await tx.scan.findUniqueOrThrow({ where: { id: scanId } });
    if (scan.status === "completed" || scan.status === "failed") throw conflict(`The scan is already ${scan.status}`);
    if (!ctx.settings.externalScanTypes.includes(scan.scanType)) {
      throw conflict(
        `${scan.scanType} scans run on the built-in engine; set SCAN_ENGINES=${scan.scanType}:external to complete them with reports`,
      );
    }
    if (lease && !(await lockHeldScan(tx, scanId, lease))) throw conflict(whyNotHeld(scan, lease));
    if (options.scanType !== undefined && options.scanType !== scan.scanType) {
      throw invalid("The report is for another scan type", [
        { path: "scanType", message: `Must be the scan's type (${scan.scanType})` },
      ]);
    }
    // An agent's claim already started it (scan.started); a queued one starts and finishes now.
    if (scan.status === "running") {
      const source = await tx.scan.update({ where: { id: scanId }, data: sourceOf(report) });
      if (report.failure) return markFailed(tx, scanId, report.failure.reason);
      return finishScan(tx, source, report.findings, report.coverage);
    }
    const running = await tx.scan.update({
      where: { id: scanId },
      data: { status: "running", startedAt: new Date(), ...sourceOf(report) },
    });
    if (report.failure) {
      await recordEvent(tx, "scan.started", toScanEventData(running), { applicationId: running.applicationId });
      return markFailed(tx, scanId, report.failure.reason);
    }
    return startAndFinish(tx, running, report);
  }, REPORT_TRANSACTION);
}
