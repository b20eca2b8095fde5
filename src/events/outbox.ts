// The writer of events, and of the NOTIFY that tells of them (which decisions.ts also uses: a triage
// decision's event is inserted by the statement that makes the decision). Called inside the
// transaction of the change an event reports, so a committed change always has its event and a
// rolled-back one never does. The NOTIFY is transactional too: the dispatchers hear of the events
// only once they are committed, and fan them out (which is also when they take their place in the
// event log, dispatcher/fan-out.ts). Its payload is the writing transaction's id (stored on each
// event row), and Postgres folds identical notifications of one transaction into one: a scan that
// records 500 events wakes each dispatcher once.
import { runSql, type SqlRunner } from "../db/run-sql.ts";
import { chunksOf } from "../domain/chunks.ts";
import type { EventData, EventType } from "./catalog.ts";
import { eventRows, type NewEvent } from "./event-rows.ts";

export const EVENTS_CHANNEL = "appsec_events";

/** The SQL expression that tells the dispatchers of the events the current transaction writes, once it commits. */
export const NOTIFY_EVENTS_WRITTEN = `pg_notify('${EVENTS_CHANNEL}', pg_current_xact_id()::text)`;

export type { NewEvent };

/** Rows per INSERT: a report may record 100,000 events in one transaction (and see record-findings.ts on the size). */
const CHUNK = 1_000;

/**
 * Who may see each event (CONTRACT §17) is decided here, in the statement that writes it: its explicit
 * audience (`teamsAll` sent), else its application's owner's team (NULL: org-wide tokens only). The
 * owners are read once per statement, over the distinct applications, with their rows share-locked
 * until the transaction ends: an owner change waits for it, or it waits for the change and (READ
 * COMMITTED) reads the row as the change left it, so each event goes to the team that owned its
 * application when it committed.
 */
const RECORD_EVENTS = `
  WITH e AS MATERIALIZED (
    SELECT * FROM json_to_recordset($1::json)
        AS e(id uuid, type text, "applicationId" uuid, data json, "occurredAt" timestamptz, teams text[], "teamsAll" boolean)
  ), owners AS (
    SELECT a.id, a.owner FROM applications a
     WHERE a.id IN (SELECT "applicationId" FROM e WHERE "teamsAll" IS NULL)
       FOR SHARE
  ), inserted AS (
    INSERT INTO events (id, type, application_id, data, occurred_at, teams, teams_all)
    SELECT e.id, e.type, e."applicationId", e.data, e."occurredAt",
           CASE WHEN e."teamsAll" IS NOT NULL THEN e.teams WHEN o.owner IS NOT NULL THEN ARRAY[o.owner] END,
           coalesce(e."teamsAll", false)
      FROM e LEFT JOIN owners o ON o.id = e."applicationId"
  )
  SELECT ${NOTIFY_EVENTS_WRITTEN}`;

/**
 * Records the events of `rows` (event-rows.ts, as JSON text) in one INSERT, with the transaction's
 * NOTIFY in the same statement (one round trip, not two); Postgres folds the identical
 * notifications of one transaction into one.
 */
export async function recordEventRows(runner: SqlRunner, rows: string): Promise<void> {
  await runSql(runner, RECORD_EVENTS, [rows]);
}

/** Records several events, whatever their number, as one INSERT per thousand. */
export async function recordEvents(runner: SqlRunner, events: readonly NewEvent[]): Promise<string[]> {
  const rows = eventRows(events);
  for (const chunk of chunksOf(rows, CHUNK)) await recordEventRows(runner, JSON.stringify(chunk));
  return rows.map((r) => r.id);
}

export async function recordEvent<T extends EventType>(
  tx: SqlRunner,
  type: T,
  data: EventData[T],
  options: Pick<NewEvent, "applicationId" | "occurredAt" | "audience"> = {},
): Promise<string> {
  const [id] = await recordEvents(tx, [{ type, data, ...options } as NewEvent]);
  return id!;
}
