// Outbox → event log → deliveries. A fan-out takes the oldest committed events not yet fanned out,
// gives each its position in the event log (event-log.ts) and queues one pending delivery per
// subscription listening for its type and not disabled, in one statement. Fan-outs run one at a time,
// on whichever instance: each locks the event_log_head row before it reads its batch (so it reads
// after the previous fan-out committed) and keeps it until it commits (so the next one numbers after
// it). Positions are thus handed out, and become visible, in order: the log has no gap a reader could
// step over, and an event is fanned out exactly once.
import type pg from "pg";
import { EVENT_LOG_CHANNEL, occurredAtIso, toLoggedEvent, type LoggedEvent, type LoggedEventRow } from "../events/event-log.ts";

// The notified CTE runs only when referenced: each end refers to it.
const RETURNING_EVENTS = `SELECT id, type, application_id, data, ${occurredAtIso("occurred_at")}, position, (SELECT count(*) FROM notified) AS notified
    FROM marked ORDER BY position`;
const RETURNING_COUNT = `SELECT count(*)::int AS fanned_out, (SELECT count(*) FROM notified) AS notified FROM marked`;

/**
 * One round trip: a simple query of several statements, each with a snapshot of its own. The lock
 * waits for the fan-out before it to commit, so the fan-out statement after it reads what that one
 * committed, the head included. Simple queries take no parameters: the batch size is a checked integer.
 */
const fanOutTransaction = (batchSize: number, returning: boolean) => `
  BEGIN;
  SELECT 1 FROM event_log_head FOR UPDATE;
  WITH batch AS (
    SELECT ctid, occurred_at, id FROM events
     WHERE fanned_out_at IS NULL
     ORDER BY occurred_at, id
     LIMIT ${batchSize}
       FOR UPDATE
  ),
  numbered AS (
    SELECT ctid, (SELECT position FROM event_log_head) + row_number() OVER (ORDER BY occurred_at, id) AS position FROM batch
  ),
  -- The batch's rows are locked, so their ctids hold until the statement ends: the update finds them
  -- by ctid whatever the planner thinks of the table's size.
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
  ),
  notified AS (
    SELECT pg_notify('${EVENT_LOG_CHANNEL}', max(position)::text) FROM marked HAVING count(*) > 0
  )
  ${returning ? RETURNING_EVENTS : RETURNING_COUNT};
  COMMIT`;

/**
 * Fans out up to `batchSize` events; returns how many, and, when `returning`, the events in log order.
 * Without, the rows do not come back at all: decoding a batch is most of its cost to this process
 * (10,000 events of one VEX held the event loop some 90 ms), wasted when no one here wants them.
 */
export async function fanOutBatch(pool: pg.Pool, batchSize: number, returning: boolean): Promise<{ fannedOut: number; events: LoggedEvent[] }> {
  if (!Number.isSafeInteger(batchSize) || batchSize < 1) throw new RangeError(`batch size must be a positive integer, got ${batchSize}`);
  const client = await pool.connect();
  let results: pg.QueryResult[];
  try {
    results = (await client.query(fanOutTransaction(batchSize, returning))) as unknown as pg.QueryResult[];
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    client.release(err as Error);
    throw err;
  }
  client.release();
  if (!returning) return { fannedOut: (results[2]!.rows[0] as { fanned_out: number }).fanned_out, events: [] };
  const rows = results[2]!.rows as LoggedEventRow[];
  return { fannedOut: rows.length, events: rows.map(toLoggedEvent).filter((e) => e !== undefined) };
}

/** Fans out up to `batchSize` events; returns them in log order. */
export async function fanOutEvents(pool: pg.Pool, batchSize: number): Promise<LoggedEvent[]> {
  return (await fanOutBatch(pool, batchSize, true)).events;
}
