// The deadlines of docs/spec/CONTRACT.md §19, each acted on within a tick of passing, exactly once: an
// accepting decision that expires reopens its vulnerability (history source `expiry`,
// `vulnerability.updated`; the SLA clock resumes by the vulnerabilities' trigger), and a remediation
// deadline is told as `vulnerability.sla_breached`. Each deadline still to act on is a row
// (decision_expiries, sla_deadlines), kept by the vulnerabilities' triggers (migrations
// 20261202120000_sla, 20261203100000_sla_told_deadlines). sla_deadlines' rows not yet told are
// indexed by severity, criticality and clock, and each of the 16 pairs has one number of days, so a
// tick reads exactly the due rows of each off the index, and nothing when nothing is due. A due row
// is locked (SKIP LOCKED: instances share the work, none waits), deleted (an expiry) or marked told
// (a breach), and its change and event written in the same transaction: once, whatever the
// instances and restarts.
import type pg from "pg";
import type { BackgroundWorker } from "../../background-worker.ts";
import { periodicRounds } from "../../periodic-rounds.ts";
import type { DatabaseHealth } from "../../db/database-health.ts";
import { inTransaction } from "../../db/pg-transaction.ts";
import { recordEvents } from "../../events/outbox.ts";
import type { Logger } from "../../log.ts";
import { CRITICALITIES } from "../applications/applications.schemas.ts";
import { severityField, type Severity } from "../validation.ts";
import { slaDays, slaMilliseconds } from "./sla-clock.ts";
import { slaDocumentSchema, type SlaDocument } from "./sla.schemas.ts";

export const DEADLINE_WATCHER_NAME = "deadline-watcher";
const SEVERITIES = severityField.options;
/** Breaches told per transaction. */
const BATCH = 1_000;

const TELL_DUE = `
  WITH due AS (
    SELECT d.vulnerability_id FROM sla_deadlines d
     WHERE NOT d.told AND d.severity = $1::"Severity" AND d.criticality = $2::"Criticality"
       AND d.clock_base <= now() - $3::bigint * interval '1 millisecond'
     ORDER BY d.clock_base
     LIMIT $4
       FOR UPDATE SKIP LOCKED
  ), told AS (
    UPDATE sla_deadlines d SET told = true FROM due WHERE d.vulnerability_id = due.vulnerability_id
    RETURNING d.vulnerability_id, d.clock_base
  )
  SELECT v.id, v.severity::text, v.application_id AS "applicationId", v.title, v.created_at AS "createdAt",
         told.clock_base + $3::bigint * interval '1 millisecond' AS "dueAt"
    FROM told JOIN vulnerabilities v ON v.id = told.vulnerability_id
   ORDER BY told.clock_base, v.id`;

/**
 * Reopens the vulnerabilities whose decision has ended: each expiry row locked (SKIP LOCKED) and
 * deleted, its vulnerability open again without a decision, and its history written, in one
 * statement; the caller records the events in the same transaction.
 */
const EXPIRE_DUE = `
  WITH due AS (
    SELECT e.vulnerability_id FROM decision_expiries e
     WHERE e.expires_at <= now()
     ORDER BY e.expires_at
     LIMIT $1
       FOR UPDATE SKIP LOCKED
  ), gone AS (
    DELETE FROM decision_expiries e USING due WHERE e.vulnerability_id = due.vulnerability_id
    RETURNING e.vulnerability_id
  ), reopened AS (
    UPDATE vulnerabilities v SET status = 'open', analysis = NULL, updated_at = now()
      FROM gone WHERE v.id = gone.vulnerability_id AND v.status = 'accepted'
    RETURNING v.id, v.severity::text, v.application_id AS "applicationId", v.title, v.created_at AS "createdAt"
  ), history AS (
    INSERT INTO vulnerability_changes (vulnerability_id, at, from_status, to_status, source)
    SELECT id, now(), 'accepted', 'open', 'expiry' FROM reopened
  )
  SELECT * FROM reopened ORDER BY "createdAt", id`;

interface Reopened {
  id: string;
  severity: string;
  applicationId: string;
  title: string;
  createdAt: Date;
}

interface Breach {
  id: string;
  severity: string;
  applicationId: string;
  title: string;
  createdAt: Date;
  dueAt: Date;
}

export interface DeadlineWatcher extends BackgroundWorker {
  /** One tick: reopens every decision ended and tells every deadline passed; resolves with how many in all. */
  runOnce(): Promise<number>;
}

export function createDeadlineWatcher(deps: {
  pool: pg.Pool;
  log: Logger;
  health?: DatabaseHealth;
  /** Between ticks: a deadline is told at most this long after it passed (plus a tick's time). */
  intervalMs?: number;
}): DeadlineWatcher {
  const rounds = periodicRounds({
    name: DEADLINE_WATCHER_NAME,
    intervalMs: deps.intervalMs ?? 15_000,
    log: deps.log,
    health: deps.health,
    failure: "deadline watcher failed",
    round: async () => {
      const done = await runOnce();
      if (done) deps.log.info({ count: done }, "decisions expired and remediation deadlines told");
    },
  });

  /** Runs `work` in a transaction on a connection of its own; answers how many rows it acted on. */
  async function batch(work: (client: pg.PoolClient) => Promise<number>): Promise<number> {
    const client = await deps.pool.connect();
    try {
      return await inTransaction(client, () => work(client));
    } finally {
      client.release();
    }
  }

  /**
   * Tells up to BATCH breaches of one pair in one transaction; how many. The SLA is read there and
   * held (FOR SHARE) until it commits, so that a `PUT /sla` waits for it, and its re-arming sees
   * what it told: no deadline is told by days no longer in force.
   */
  const tellBatch = (severity: Severity, criticality: (typeof CRITICALITIES)[number]) =>
    batch(async (client) => {
      const { rows: settings } = await client.query<{ document: unknown }>(
        "SELECT document FROM sla_settings FOR SHARE",
      );
      const sla: SlaDocument = slaDocumentSchema.parse(settings[0]!.document);
      const ms = slaMilliseconds(slaDays(sla, severity, criticality));
      const { rows } = await client.query<Breach>(TELL_DUE, [severity, criticality, ms, BATCH]);
      await recordEvents(
        client,
        rows.map((b) => ({
          type: "vulnerability.sla_breached" as const,
          applicationId: b.applicationId,
          data: {
            id: b.id,
            severity: b.severity,
            applicationId: b.applicationId,
            title: b.title,
            createdAt: b.createdAt.toISOString(),
            dueAt: b.dueAt.toISOString(),
          },
        })),
      );
      return rows.length;
    });

  /** Reopens up to BATCH vulnerabilities whose decision ended, in one transaction; how many. */
  const expireBatch = () =>
    batch(async (client) => {
      const { rows } = await client.query<Reopened>(EXPIRE_DUE, [BATCH]);
      await recordEvents(
        client,
        rows.map((v) => ({
          type: "vulnerability.updated" as const,
          applicationId: v.applicationId,
          data: {
            id: v.id,
            severity: v.severity,
            applicationId: v.applicationId,
            title: v.title,
            createdAt: v.createdAt.toISOString(),
            status: "open",
            analysis: null,
          },
        })),
      );
      return rows.length;
    });

  async function runOnce(): Promise<number> {
    let done = 0;
    for (;;) {
      const n = await expireBatch();
      done += n;
      if (n < BATCH || rounds.stopping) break;
    }
    return done + (await tellBreaches());
  }

  async function tellBreaches(): Promise<number> {
    let told = 0;
    for (const severity of SEVERITIES) {
      for (const criticality of CRITICALITIES) {
        for (;;) {
          const n = await tellBatch(severity, criticality);
          told += n;
          if (n < BATCH || rounds.stopping) break;
        }
      }
    }
    return told;
  }

  return { name: DEADLINE_WATCHER_NAME, runOnce, start: () => rounds.start(), stop: () => rounds.stop() };
}
