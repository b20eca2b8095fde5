// Retention of the event log (EVENT_RETENTION_DAYS): a background worker deletes the log's oldest
// events, a small batch per statement, and moves the retention mark (event_log_retention) past them in
// the same statement, so a reader either reads an event or learns that its cursor expired, never
// steps over a hole. The log stays a suffix: a batch is the oldest run of events older than the
// cutoff, stopping at the first younger one. An event that a pending delivery still needs is kept
// (its delivery log with it) and deleted by a later round once nothing pending needs it; so is one a
// writer holds a lock on. Rows are locked with SKIP LOCKED, so retention never waits on the
// dispatcher or a writer, and instances take turns through the mark's row (skipped when held).
import { setTimeout as delay } from "node:timers/promises";
import type pg from "pg";
import type { BackgroundWorker } from "../background-worker.ts";
import { periodicRounds } from "../periodic-rounds.ts";
import type { DatabaseHealth } from "../db/database-health.ts";
import type { Logger } from "../log.ts";
import { AUDIT_EVENT_TYPES } from "./catalog.ts";

export const EVENT_RETENTION_NAME = "event-retention";
const BATCH = 500;
/** Between two batches of one round: room for everyone else's statements. */
const PAUSE_MS = 20;

const NOT_PENDING = `NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status = 'pending')`;

// The audit trail's events (AUDIT_RETENTION_DAYS, at least EVENT_RETENTION_DAYS) stay behind the
// log's mark until they expire in turn, behind a mark of their own that a read of those types alone
// starts from (event-log.ts): two suffixes of one log, each without holes.
const AUDIT = `ARRAY['${AUDIT_EVENT_TYPES.join("','")}']`;
const NOT_AUDIT = `NOT e.type = ANY (${AUDIT})`;

// Moves the mark past the next run of expired events and deletes those no pending delivery needs.
const ADVANCE = `
  WITH mark AS (
    SELECT pruned_through FROM event_log_retention FOR UPDATE SKIP LOCKED
  ),
  candidates AS (
    SELECT e.position, e.occurred_at FROM events e
     WHERE e.position > (SELECT pruned_through FROM mark)
     ORDER BY e.position
     LIMIT $1
  ),
  expired AS (
    SELECT position FROM candidates
     WHERE position < coalesce((SELECT min(position) FROM candidates WHERE occurred_at >= now() - make_interval(days => $2)), 9223372036854775807)
  ),
  doomed AS (
    SELECT e.ctid FROM events e
     WHERE e.position = ANY (ARRAY(SELECT position FROM expired)) AND ${NOT_AUDIT} AND ${NOT_PENDING}
       FOR UPDATE SKIP LOCKED
  ),
  deleted AS (
    DELETE FROM events e WHERE e.ctid = ANY (ARRAY(SELECT ctid FROM doomed)) RETURNING 1
  ),
  moved AS (
    UPDATE event_log_retention SET pruned_through = (SELECT max(position) FROM expired) WHERE EXISTS (SELECT 1 FROM expired)
  )
  SELECT (SELECT count(*) FROM expired) AS expired, (SELECT count(*) FROM deleted) AS deleted`;

// Events already behind the mark that were kept for a pending delivery (or locked) the first time.
const SWEEP = `
  WITH mark AS (
    SELECT pruned_through, audit_pruned_through FROM event_log_retention FOR UPDATE SKIP LOCKED
  ),
  doomed AS (
    SELECT e.ctid FROM events e
     WHERE e.position <= (SELECT pruned_through FROM mark) AND ${NOT_PENDING}
       AND (${NOT_AUDIT} OR e.position <= (SELECT audit_pruned_through FROM mark))
     LIMIT $1
       FOR UPDATE SKIP LOCKED
  )
  DELETE FROM events e WHERE e.ctid = ANY (ARRAY(SELECT ctid FROM doomed))`;

// ADVANCE for the audit trail behind the log's mark: moves the audit mark past the next run of
// expired audit events (never past the log's mark) and deletes those no pending delivery needs.
const ADVANCE_AUDIT = `
  WITH mark AS (
    SELECT pruned_through, audit_pruned_through FROM event_log_retention FOR UPDATE SKIP LOCKED
  ),
  candidates AS (
    SELECT e.position, e.occurred_at FROM events e
     WHERE e.position > (SELECT audit_pruned_through FROM mark) AND e.position <= (SELECT pruned_through FROM mark)
       AND NOT ${NOT_AUDIT}
     ORDER BY e.position
     LIMIT $1
  ),
  expired AS (
    SELECT position FROM candidates
     WHERE position < coalesce((SELECT min(position) FROM candidates WHERE occurred_at >= now() - make_interval(days => $2)), 9223372036854775807)
  ),
  -- With no audit event left before the log's mark, the audit mark joins it.
  through AS (
    SELECT CASE WHEN (SELECT count(*) FROM candidates) = (SELECT count(*) FROM expired) AND (SELECT count(*) FROM candidates) < $1
                THEN (SELECT pruned_through FROM mark) ELSE (SELECT max(position) FROM expired) END AS position
  ),
  doomed AS (
    SELECT e.ctid FROM events e
     WHERE e.position = ANY (ARRAY(SELECT position FROM expired)) AND ${NOT_PENDING}
       FOR UPDATE SKIP LOCKED
  ),
  deleted AS (
    DELETE FROM events e WHERE e.ctid = ANY (ARRAY(SELECT ctid FROM doomed)) RETURNING 1
  ),
  moved AS (
    UPDATE event_log_retention SET audit_pruned_through = (SELECT position FROM through)
     WHERE (SELECT position FROM through) > audit_pruned_through
  )
  SELECT (SELECT count(*) FROM expired) AS expired, (SELECT count(*) FROM deleted) AS deleted`;

export interface EventRetention extends BackgroundWorker {
  /** One round: deletes what has expired, batch after batch; resolves with the number of events deleted. */
  runOnce(): Promise<number>;
}

export function createEventRetention(deps: {
  pool: pg.Pool;
  retentionDays: number;
  /** The audit trail's (AUDIT_RETENTION_DAYS); never shorter than retentionDays. */
  auditRetentionDays?: number;
  log: Logger;
  health?: DatabaseHealth;
  /** Between rounds. */
  intervalMs?: number;
  batchSize?: number;
}): EventRetention {
  const intervalMs = deps.intervalMs ?? 60_000;
  const batchSize = deps.batchSize ?? BATCH;
  const auditDays = Math.max(deps.auditRetentionDays ?? deps.retentionDays, deps.retentionDays);
  const rounds = periodicRounds({
    name: EVENT_RETENTION_NAME,
    intervalMs,
    log: deps.log,
    health: deps.health,
    failure: "event retention failed",
    round: async () => {
      const deleted = await runOnce();
      if (deleted) deps.log.info({ deleted, retentionDays: deps.retentionDays }, "expired events deleted");
    },
  });

  async function runOnce(): Promise<number> {
    let deleted = (await deps.pool.query(SWEEP, [batchSize])).rowCount ?? 0;
    for (;;) {
      const { rows } = await deps.pool.query<{ expired: string; deleted: string }>(ADVANCE, [
        batchSize,
        deps.retentionDays,
      ]);
      deleted += Number(rows[0]!.deleted);
      if (Number(rows[0]!.expired) < batchSize || rounds.stopping) break;
      await delay(PAUSE_MS);
    }
    for (;;) {
      const { rows } = await deps.pool.query<{ expired: string; deleted: string }>(ADVANCE_AUDIT, [
        batchSize,
        auditDays,
      ]);
      deleted += Number(rows[0]!.deleted);
      if (Number(rows[0]!.expired) < batchSize || rounds.stopping) return deleted;
      await delay(PAUSE_MS);
    }
  }

  return { name: EVENT_RETENTION_NAME, runOnce, start: () => rounds.start(), stop: () => rounds.stop() };
}
