// Outbox → event log → deliveries. A fan-out takes the oldest committed events not yet fanned out,
// gives each its position in the event log (event-log.ts) and queues one pending delivery per
// subscription listening for its type and not disabled, in one statement. Fan-outs run one at a time,
// on whichever instance: each locks the event_log_head row before it reads its batch (so it reads
// after the previous fan-out committed) and keeps it until it commits (so the next one numbers after
// it). Positions are thus handed out, and become visible, in order: the log has no gap a reader could
// step over, and an event is fanned out exactly once.
import type pg from "pg";
import { EVENT_LOG_CHANNEL, toLoggedEvent, type LoggedEvent, type LoggedEventRow } from "../events/event-log.ts";

const LOCK_HEAD = "SELECT position FROM event_log_head FOR UPDATE";

// The batch's rows are locked, so their ctids hold until the statement ends: the update finds
// them by ctid whatever the planner thinks of the table's size.
const FAN_OUT = `
  WITH batch AS (
    SELECT ctid, occurred_at, id FROM events
     WHERE fanned_out_at IS NULL
     ORDER BY occurred_at, id
     LIMIT $1
       FOR UPDATE
  ),
  numbered AS (
    SELECT ctid, $2::bigint + row_number() OVER (ORDER BY occurred_at, id) AS position FROM batch
  ),
  marked AS (
    UPDATE events e SET fanned_out_at = now(), position = n.position
      FROM unnest(ARRAY(SELECT ctid FROM numbered), ARRAY(SELECT position FROM numbered)) AS n(ctid, position)
     WHERE e.ctid = n.ctid
    RETURNING e.id, e.type, e.application_id, e.data, e.occurred_at, e.position
  ),
  queued AS (
    INSERT INTO webhook_deliveries (id, webhook_id, event_id, status, next_attempt_at, created_at, updated_at)
    SELECT uuid_v7(), w.id, m.id, 'pending', now(), now(), now()
      FROM marked m JOIN webhooks w ON w.status <> 'disabled' AND m.type = ANY (w.events)
     ORDER BY m.position
  ),
  extended AS (
    UPDATE event_log_head SET position = (SELECT max(position) FROM marked) WHERE EXISTS (SELECT 1 FROM marked)
  )
  SELECT id, type, application_id, data, occurred_at, position FROM marked ORDER BY position`;

/** Fans out up to `batchSize` events; returns them in log order. */
export async function fanOutEvents(pool: pg.Pool, batchSize: number): Promise<LoggedEvent[]> {
  const client = await pool.connect();
  let rows: LoggedEventRow[];
  try {
    await client.query("BEGIN");
    const head = (await client.query<{ position: string }>(LOCK_HEAD)).rows[0]!.position;
    ({ rows } = await client.query<LoggedEventRow>({ name: "fan-out-events", text: FAN_OUT, values: [batchSize, head] }));
    if (rows.length) await client.query("SELECT pg_notify($1, $2)", [EVENT_LOG_CHANNEL, String(rows.at(-1)!.position)]);
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    client.release(err as Error);
    throw err;
  }
  client.release();
  return rows.map(toLoggedEvent).filter((e) => e !== undefined);
}
