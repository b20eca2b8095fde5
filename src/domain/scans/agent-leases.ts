// Agents' leases on external scans (docs/spec/CONTRACT.md §12), in SQL: claiming, renewing, handing back, and
// the rule that returns a lapsed lease's scan to the queue. An agent's lease is a running scan with
// `agent` set; `lease_owner` is the agent's token subject and `lease_id` the claim's own id, so a
// lease that lapsed and was claimed again is not the old holder's any more, even with one token.
// The scan runner never takes these over (claimScans skips rows with an agent).
import { randomUUID } from "node:crypto";
import type { Db, Tx } from "../../db/client.ts";
import { recordEvent, recordEvents } from "../../events/outbox.ts";
import { Prisma, type Application, type Scan } from "../../generated/prisma/client.ts";
import { APPLICATION_COLUMNS } from "../applications/application-reads.ts";
import { reviveRows } from "../per-application.ts";
import { SCAN_COLUMNS } from "./scans-per-application.ts";
import { SCAN_QUEUED_CHANNEL } from "./scan-queued-channel.ts";
import { toScanEventData } from "./scan.view.ts";

/** A scan whose agents' leases lapsed this often fails instead of going back to the queue. */
export const MAX_EXPIRED_LEASES = 3;

/** Who claims to hold a lease: the token's subject and, when it says, the claim's id. */
export interface LeaseHolder {
  owner: string;
  leaseId?: string | undefined;
}

export interface AgentClaimRequest {
  scanTypes: readonly string[];
  owner: string;
  agent: string;
  leaseSeconds: number;
  /** A confined agent's teams: it claims only their applications' scans (CONTRACT §17); null: any. */
  teams: readonly string[] | null;
}

export interface AgentClaim {
  scan: Scan;
  application: Application;
  leaseId: string;
}

/** SQL condition: the scan is running under this holder's agent lease, and it has not lapsed. */
const heldBy = (scanId: string, holder: LeaseHolder) => Prisma.sql`
  id = ${scanId}::uuid AND status = 'running' AND agent IS NOT NULL AND lease_owner = ${holder.owner}
  AND lease_expires_at > now() AND (${holder.leaseId ?? null}::uuid IS NULL OR lease_id = ${holder.leaseId ?? null}::uuid)`;

/** The scan columns a claim returns, named as Prisma's Scan fields, so its row is a Scan. */
const CLAIMED_SCAN = Prisma.raw(
  Object.entries(SCAN_COLUMNS)
    .map(([field, column]) => `${column.replace(/^t\./, "s.")} AS "${field}"`)
    .join(", "),
);

const ofTeams = (teams: readonly string[] | null) =>
  teams === null
    ? Prisma.empty
    : Prisma.sql`AND EXISTS (SELECT 1 FROM applications a WHERE a.id = scans.application_id AND a.owner = ANY(${[...teams]}::text[]))`;

/**
 * Claims the oldest queued scan of these types for an agent: now running (scan.started), its lease
 * `leaseSeconds` long. SKIP LOCKED: agents claiming at once each get another scan, or none. With
 * none queued, the lapsed leases are settled first (every scan runner's loop also does it each
 * second), so a scan whose agent died is claimable at once; a claim that finds work costs no more.
 */
export async function claimForAgent(db: Db, claim: AgentClaimRequest): Promise<AgentClaim | null> {
  return (await claimQueued(db, claim)) ?? ((await expireAgentLeases(db)).requeued > 0 ? claimQueued(db, claim) : null);
}

async function claimQueued(db: Db, claim: AgentClaimRequest): Promise<AgentClaim | null> {
  return db.$transaction(async (tx) => {
    const leaseId = randomUUID();
    // The application comes back with the claimed row: one round trip fewer on every claim.
    const [row] = await tx.$queryRaw<(Scan & { application: Record<string, unknown> })[]>`
      WITH next AS (
        SELECT id FROM scans
         WHERE status = 'queued' AND scan_type::text = ANY(${claim.scanTypes}::text[]) ${ofTeams(claim.teams)}
         ORDER BY created_at, id
         LIMIT 1
         FOR UPDATE SKIP LOCKED
      )
      UPDATE scans s
         SET status = 'running', started_at = now(), lease_owner = ${claim.owner}, agent = ${claim.agent},
             lease_id = ${leaseId}::uuid, lease_seconds = ${claim.leaseSeconds}::int,
             lease_expires_at = now() + ${claim.leaseSeconds}::int * interval '1 second',
             run_attempts = s.run_attempts + 1
        FROM next
       WHERE s.id = next.id
      RETURNING ${CLAIMED_SCAN},
                (SELECT row_to_json(a) FROM (SELECT ${Prisma.raw(APPLICATION_COLUMNS)} FROM applications WHERE id = s.application_id) a) AS application`;
    if (!row) return null;
    const { application, ...scan } = row;
    await recordEvent(tx, "scan.started", toScanEventData(scan), { applicationId: scan.applicationId });
    const [revived] = reviveRows<Application>([application], ["createdAt", "updatedAt"]);
    return { scan, application: revived!, leaseId };
  });
}

/** Extends the holder's live lease by its length; the new expiry, or null when it does not hold one. */
export async function renewAgentLease(db: Db, scanId: string, holder: LeaseHolder): Promise<Date | null> {
  const rows = await db.$queryRaw<{ lease_expires_at: Date }[]>`
    UPDATE scans SET lease_expires_at = now() + lease_seconds * interval '1 second'
     WHERE ${heldBy(scanId, holder)}
    RETURNING lease_expires_at`;
  return rows[0]?.lease_expires_at ?? null;
}

/** Locks the scan if the holder's lease on it is live; false otherwise (see whyNotHeld). */
export async function lockHeldScan(tx: Tx, scanId: string, holder: LeaseHolder): Promise<boolean> {
  const rows = await tx.$queryRaw<unknown[]>`SELECT 1 FROM scans WHERE ${heldBy(scanId, holder)} FOR UPDATE`;
  return rows.length > 0;
}

/** Why the holder has no live lease on this (existing) scan, for a 409 that says what happened. */
export function whyNotHeld(scan: Scan, holder: LeaseHolder): string {
  if (scan.status === "completed" || scan.status === "failed") return `The scan is already ${scan.status}`;
  if (scan.status === "queued")
    return "The scan is queued: no agent holds it (its lease lapsed or was released); claim it again";
  if (!scan.agent) return "The scan is run by the service's own engine, not by an agent";
  if (scan.leaseOwner !== holder.owner || (holder.leaseId !== undefined && scan.leaseId !== holder.leaseId)) {
    return "The scan's lease is held by another claim: this one was lost";
  }
  return "The scan's lease expired: it is lost, and the scan goes back to the queue";
}

/**
 * Hands a held scan back to the queue at once (a graceful stop): queued again, its claim not
 * counted against it, and the agents waiting for work woken. The caller has locked it.
 */
export async function requeueHeldScan(tx: Tx, scanId: string): Promise<Scan> {
  const [scan] = await tx.$queryRaw<{ id: string }[]>`
    UPDATE scans
       SET status = 'queued', started_at = NULL, lease_owner = NULL, lease_expires_at = NULL,
           agent = NULL, lease_id = NULL, lease_seconds = NULL, run_attempts = GREATEST(run_attempts - 1, 0)
     WHERE id = ${scanId}::uuid
    RETURNING id::text AS id`;
  await tx.$executeRaw`SELECT pg_notify(${SCAN_QUEUED_CHANNEL}, ${scanId})`;
  return tx.scan.findUniqueOrThrow({ where: { id: scan!.id } });
}

/**
 * The rule for lapsed agent leases, one statement: each such scan goes back to `queued` (and the
 * waiting agents are woken), or, once its leases have lapsed MAX_EXPIRED_LEASES times, fails
 * (scan.failed, the reason in `failure`). SKIP LOCKED: a report or heartbeat being recorded for
 * the scan right now goes first, and instances sweeping at once share the work. Run by every scan
 * runner's loop (expireAgentLeases) and by an agent's claim that finds nothing queued.
 */
async function settleLapsedLeases(tx: Tx): Promise<{ requeued: number; failed: number }> {
  const rows = await tx.$queryRaw<{ id: string; status: string }[]>`
    WITH lapsed AS (
      SELECT id FROM scans
       WHERE status = 'running' AND agent IS NOT NULL AND lease_expires_at <= now()
       ORDER BY lease_expires_at
       LIMIT 100
       FOR UPDATE SKIP LOCKED
    ), settled AS (
      UPDATE scans s
         SET status = (CASE WHEN s.run_attempts >= ${MAX_EXPIRED_LEASES}::int THEN 'failed' ELSE 'queued' END)::"ScanStatus",
             started_at = CASE WHEN s.run_attempts >= ${MAX_EXPIRED_LEASES}::int THEN s.started_at END,
             completed_at = CASE WHEN s.run_attempts >= ${MAX_EXPIRED_LEASES}::int THEN now() END,
             error = CASE WHEN s.run_attempts >= ${MAX_EXPIRED_LEASES}::int
               THEN format('No agent finished the scan: its lease expired %s times (last held by agent %L)', s.run_attempts, s.agent) END,
             lease_owner = NULL, lease_expires_at = NULL, agent = NULL, lease_id = NULL, lease_seconds = NULL
        FROM lapsed
       WHERE s.id = lapsed.id
      RETURNING s.id, s.status
    )
    SELECT id::text AS id, status::text AS status,
           (CASE WHEN status = 'queued' THEN pg_notify(${SCAN_QUEUED_CHANNEL}, id::text) END)::text AS notified
      FROM settled`;
  const failedIds = rows.filter((r) => r.status === "failed").map((r) => r.id);
  if (failedIds.length > 0) {
    const failed = await tx.scan.findMany({ where: { id: { in: failedIds } } });
    await recordEvents(
      tx,
      failed.map((scan) => ({
        type: "scan.failed" as const,
        data: toScanEventData(scan),
        applicationId: scan.applicationId,
      })),
    );
  }
  return { requeued: rows.length - failedIds.length, failed: failedIds.length };
}

/** Settles the lapsed agent leases (settleLapsedLeases) in a transaction of its own. */
export const expireAgentLeases = (db: Db) => db.$transaction(settleLapsedLeases);
