// Outbox → deliveries: each committed event becomes one pending delivery per subscription that is
// listening for its type and not disabled. One statement per batch of events: it locks them with
// SKIP LOCKED, marks them and inserts their deliveries, so concurrent dispatchers split the outbox
// and an event is fanned out exactly once, with no interactive transaction.
import type pg from "pg";
import { toEventEnvelope, type EventEnvelope, type EventRow } from "../events/catalog.ts";

const FAN_OUT = `
  WITH batch AS (
    SELECT id FROM events
     WHERE fanned_out_at IS NULL
     ORDER BY occurred_at, id
     LIMIT $1
       FOR UPDATE SKIP LOCKED
  ),
  marked AS (
    UPDATE events e SET fanned_out_at = now() FROM batch WHERE e.id = batch.id
    RETURNING e.id, e.type, e.data, e.occurred_at
  ),
  queued AS (
    INSERT INTO webhook_deliveries (id, webhook_id, event_id, status, next_attempt_at, created_at, updated_at)
    SELECT uuid_v7(), w.id, m.id, 'pending', now(), now(), now()
      FROM marked m JOIN webhooks w ON w.status <> 'disabled' AND m.type = ANY (w.events)
     ORDER BY m.occurred_at, m.id
    RETURNING 1
  )
  SELECT id, type, data, occurred_at, (SELECT count(*) FROM queued)::int AS queued
    FROM marked ORDER BY occurred_at, id`;

export interface FannedOut {
  /** The events fanned out, in the order they happened. */
  events: EventEnvelope[];
  /** Deliveries queued for them. */
  queued: number;
}

/** Fans out up to `batchSize` events. */
export async function fanOutEvents(pool: pg.Pool, batchSize: number): Promise<FannedOut> {
  const { rows } = await pool.query<EventRow & { queued: number }>({ name: "fan-out-events", text: FAN_OUT, values: [batchSize] });
  return { events: rows.map(toEventEnvelope), queued: rows[0]?.queued ?? 0 };
}
