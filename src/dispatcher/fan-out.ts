// Outbox → deliveries: each committed event becomes one pending delivery per subscription that is
// listening for its type and not disabled. One statement per batch of events: it locks them with
// SKIP LOCKED, marks them and inserts their deliveries, so concurrent dispatchers split the outbox
// and an event is fanned out exactly once, with no interactive transaction.
import type pg from "pg";
import { toEventEnvelope, type EventEnvelope, type EventRow } from "../events/catalog.ts";

// The batch's rows are locked, so their ctids hold until the statement ends: the update finds
// them by ctid whatever the planner thinks of the table's size.
const FAN_OUT = `
  WITH batch AS (
    SELECT ctid FROM events
     WHERE fanned_out_at IS NULL
     ORDER BY occurred_at, id
     LIMIT $1
       FOR UPDATE SKIP LOCKED
  ),
  marked AS (
    UPDATE events e SET fanned_out_at = now() WHERE e.ctid = ANY (ARRAY(SELECT ctid FROM batch))
    RETURNING e.id, e.type, e.data, e.occurred_at
  ),
  queued AS (
    INSERT INTO webhook_deliveries (id, webhook_id, event_id, status, next_attempt_at, created_at, updated_at)
    SELECT uuid_v7(), w.id, m.id, 'pending', now(), now(), now()
      FROM marked m JOIN webhooks w ON w.status <> 'disabled' AND m.type = ANY (w.events)
     ORDER BY m.occurred_at, m.id
  )
  SELECT id, type, data, occurred_at FROM marked ORDER BY occurred_at, id`;

/** Fans out up to `batchSize` events; returns them in the order they happened. */
export async function fanOutEvents(pool: pg.Pool, batchSize: number): Promise<EventEnvelope[]> {
  const { rows } = await pool.query<EventRow>({ name: "fan-out-events", text: FAN_OUT, values: [batchSize] });
  return rows.map(toEventEnvelope);
}
