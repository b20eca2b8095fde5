// Moving scans past `queued`, for the scan runner: claim (queued → running, or take over a running
// scan whose lease lapsed), complete, fail, renew and release leases. Every transition writes its
// events in its own transaction, and the final writes only happen while the caller holds the lease.
import type { Db, Tx } from "../../db/client.ts";
import { recordEvent, recordEvents } from "../../events/outbox.ts";
import type { Scan } from "../../generated/prisma/client.ts";
import { evaluatePolicies } from "../policies/policy-evaluation.ts";
import { WHOLE_SCOPE, type Finding, type FindingBatches, type ReportCoverage } from "../vulnerabilities/finding.ts";
import { recordFindings } from "../vulnerabilities/record-findings.ts";
import { engineSourceColumns, type EngineSource } from "./scan-source.ts";
import { toScanEventData } from "./scan.view.ts";

/** A finished scan holds no lease, the runner's or an agent's. */
const NO_LEASE = { leaseOwner: null, leaseExpiresAt: null, agent: null, leaseId: null, leaseSeconds: null } as const;

export interface LeaseOptions {
  /** Identifies the runner instance holding the lease. */
  owner: string;
  leaseMs: number;
}

export interface ClaimOptions extends LeaseOptions {
  limit: number;
  /** A scan claimed more often than this (its runners kept dying) fails instead of running again. */
  maxAttempts: number;
  /** Scan types whose queued scans wait for a report from CI: never claimed for an engine. */
  externalScanTypes?: readonly string[];
}

/**
 * Claims up to `limit` scans: queued ones, and running ones whose lease lapsed (their runner died)
 * or was released. SKIP LOCKED lets several runners claim at once without waiting on each other.
 * Never an agent's scan (`agent` set): its lapsed lease is expireAgentLeases's to settle.
 * A queued scan starts here (scan.started); a taken-over one restarts silently, keeping its startedAt.
 */
export async function claimScans(db: Db, options: ClaimOptions): Promise<Scan[]> {
  return db.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ id: string; status: string; run_attempts: number }[]>`
      WITH next AS (
        SELECT id FROM scans
         WHERE (status = 'queued' AND scan_type::text <> ALL(${options.externalScanTypes ?? []}::text[]))
            OR (status = 'running' AND agent IS NULL AND (lease_expires_at IS NULL OR lease_expires_at <= now()))
         ORDER BY created_at, id
         LIMIT ${options.limit}::int
         FOR UPDATE SKIP LOCKED
      )
      UPDATE scans s
         SET lease_owner = ${options.owner},
             lease_expires_at = now() + ${options.leaseMs}::int * interval '1 millisecond',
             run_attempts = s.run_attempts + 1
        FROM next
       WHERE s.id = next.id
      RETURNING s.id::text AS id, s.status::text AS status, s.run_attempts`;

    const claimed: Scan[] = [];
    for (const row of rows) {
      if (row.run_attempts > options.maxAttempts) {
        await markFailed(tx, row.id, `Gave up after ${options.maxAttempts} attempts`);
      } else if (row.status === "queued") {
        const scan = await tx.scan.update({
          where: { id: row.id },
          data: { status: "running", startedAt: new Date() },
        });
        await recordEvent(tx, "scan.started", toScanEventData(scan), { applicationId: scan.applicationId });
        claimed.push(scan);
      } else {
        claimed.push(await tx.scan.findUniqueOrThrow({ where: { id: row.id } }));
      }
    }
    return claimed;
  });
}

/** Extends the lease of a running scan; false when the caller no longer holds it (or the scan is gone). */
export async function renewLease(db: Db, scanId: string, lease: LeaseOptions): Promise<boolean> {
  const count = await db.$executeRaw`
    UPDATE scans SET lease_expires_at = now() + ${lease.leaseMs}::int * interval '1 millisecond'
     WHERE id = ${scanId}::uuid AND lease_owner = ${lease.owner} AND status = 'running'`;
  return count > 0;
}

/**
 * Makes the owner's running scans claimable at once. `refundAttempt` for a graceful stop (the
 * attempt did not fail, it was interrupted); without it the attempt counts towards maxAttempts.
 */
export async function releaseLeases(
  db: Db,
  owner: string,
  options: { scanId?: string; refundAttempt: boolean },
): Promise<number> {
  const refund = options.refundAttempt ? 1 : 0;
  return db.$executeRaw`
    UPDATE scans SET lease_owner = NULL, lease_expires_at = NULL, run_attempts = GREATEST(run_attempts - ${refund}::int, 0)
     WHERE lease_owner = ${owner} AND status = 'running' AND agent IS NULL
       AND (${options.scanId ?? null}::uuid IS NULL OR id = ${options.scanId ?? null}::uuid)`;
}

/** Locks the scan if the caller still holds its lease; null when it lost it or the scan was deleted. */
async function lockLeasedScan(tx: Tx, scanId: string, owner: string): Promise<boolean> {
  const rows = await tx.$queryRaw<unknown[]>`
    SELECT 1 FROM scans WHERE id = ${scanId}::uuid AND lease_owner = ${owner} AND status = 'running' FOR UPDATE`;
  return rows.length > 0;
}

/**
 * Records the findings, the summary, and the policy verdict, with all their events, in one
 * transaction. Returns null (and changes nothing) when the caller no longer holds the lease.
 * `source`: the engine that ran it, which its findings are recorded as (whatever the scan said
 * when it was triggered, should the configuration have changed since).
 */
export async function completeScan(
  db: Db,
  scanId: string,
  owner: string,
  findings: readonly Finding[],
  source?: EngineSource,
): Promise<Scan | null> {
  return db.$transaction(async (tx) => {
    if (!(await lockLeasedScan(tx, scanId, owner))) return null;
    const scan = source
      ? await tx.scan.update({ where: { id: scanId }, data: engineSourceColumns(source) })
      : await tx.scan.findUniqueOrThrow({ where: { id: scanId } });
    return finishScan(tx, scan, [findings]);
  });
}

/**
 * What completing a scan writes, whatever its findings came from (the engine or a report): the
 * findings, the summary, scan.completed and the policy verdict. Scans of one application finish
 * one at a time, so two of them never update the same vulnerabilities in opposite orders.
 * `coverage`: which earlier findings it may resolve (a report's parts; an engine's scan, all).
 */
export async function finishScan(
  tx: Tx,
  scan: Scan,
  findings: FindingBatches,
  coverage: ReportCoverage = WHOLE_SCOPE,
): Promise<Scan> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${scan.applicationId}, 0))`;
  const { summary } = await recordFindings(tx, scan, findings, coverage);
  const completed = await tx.scan.update({
    where: { id: scan.id },
    data: {
      status: "completed",
      completedAt: new Date(),
      summary: { ...summary },
      ...NO_LEASE,
    },
  });
  await recordEvent(tx, "scan.completed", toScanEventData(completed), { applicationId: completed.applicationId });

  const evaluation = await evaluatePolicies(tx, completed.applicationId);
  await recordEvents(
    tx,
    evaluation.violations.map((violation) => ({
      type: "policy.violated",
      data: { ...violation, applicationId: completed.applicationId, scanId: completed.id },
      applicationId: completed.applicationId,
    })),
  );
  return completed;
}

/**
 * Fails the scans of external types still waiting for their report `timeoutMs` after they were
 * queued (scan.failed). SKIP LOCKED: a report being recorded right now wins. A scan an agent holds
 * is not waiting: its lease bounds it (and the agent's own timeout its tool). Should that lease
 * lapse past the timeout, the scan, queued again, fails here instead of waiting for another agent.
 */
export async function failOverdueExternalScans(
  db: Db,
  scanTypes: readonly string[],
  timeoutMs: number,
): Promise<number> {
  if (scanTypes.length === 0) return 0;
  return db.$transaction(async (tx) => {
    const overdue = await tx.$queryRaw<{ id: string }[]>`
      SELECT id::text FROM scans
       WHERE status = 'queued' AND scan_type::text = ANY(${scanTypes}::text[])
         AND created_at <= now() - ${timeoutMs}::int * interval '1 millisecond'
       ORDER BY created_at
       LIMIT 100
       FOR UPDATE SKIP LOCKED`;
    for (const { id } of overdue)
      await markFailed(tx, id, `No report arrived within ${timeoutMs} ms (SCAN_EXTERNAL_TIMEOUT_MS)`);
    return overdue.length;
  });
}

/** Fails the scan (scan.failed) if the caller still holds its lease; null otherwise. */
export async function failScan(db: Db, scanId: string, owner: string, error: string): Promise<Scan | null> {
  return db.$transaction(async (tx) => {
    if (!(await lockLeasedScan(tx, scanId, owner))) return null;
    return markFailed(tx, scanId, error);
  });
}

/** Fails the scan (scan.failed, `error` its reason); the caller has locked it. */
export async function markFailed(tx: Tx, scanId: string, error: string): Promise<Scan> {
  const failed = await tx.scan.update({
    where: { id: scanId },
    data: { status: "failed", completedAt: new Date(), error, ...NO_LEASE },
  });
  await recordEvent(tx, "scan.failed", toScanEventData(failed), { applicationId: failed.applicationId });
  return failed;
}
