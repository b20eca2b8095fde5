// The only writer of events. Called inside the transaction of the change an event reports, so a
// committed change always has its event and a rolled-back one never does. The NOTIFY is
// transactional too: the dispatchers hear of the events only once they are committed, and fan them
// out (which is also when they take their place in the event log, dispatcher/fan-out.ts). Its
// payload is the writing transaction's id (stored on each event row), and Postgres folds identical
// notifications of one transaction into one: a scan that records 500 events wakes each dispatcher once.
import type { Tx } from "../db/client.ts";
import { chunksOf } from "../domain/chunks.ts";
import { newId } from "../ids.ts";
import type { EventData, EventType } from "./catalog.ts";

export const EVENTS_CHANNEL = "appsec_events";

export interface NewEvent<T extends EventType = EventType> {
  type: T;
  data: EventData[T];
  applicationId?: string;
  occurredAt?: Date;
}

/** Rows per INSERT: a report may record 100,000 events in one transaction (and see record-findings.ts on the size). */
const CHUNK = 1_000;

/**
 * Records several events, whatever their number, as one INSERT per thousand (every column an array
 * parameter), each with the transaction's NOTIFY.
 */
export async function recordEvents(tx: Tx, events: readonly NewEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const ids = events.map(() => newId());
  // Each INSERT notifies in the same statement (one round trip, not two); Postgres folds the
  // identical notifications of one transaction into one.
  for (const chunk of chunksOf(events.map((e, i) => ({ ...e, id: ids[i]! })), CHUNK)) {
    await tx.$executeRaw`
      WITH inserted AS (
        INSERT INTO events (id, type, application_id, data, occurred_at)
        SELECT * FROM unnest(${chunk.map((e) => e.id)}::uuid[], ${chunk.map((e) => e.type)}::text[],
                             ${chunk.map((e) => e.applicationId ?? null)}::uuid[], ${chunk.map((e) => JSON.stringify(e.data))}::json[],
                             ${chunk.map((e) => (e.occurredAt ?? new Date()).toISOString())}::timestamptz[])
      )
      SELECT pg_notify(${EVENTS_CHANNEL}, pg_current_xact_id()::text)`;
  }
  return ids;
}

export async function recordEvent<T extends EventType>(
  tx: Tx,
  type: T,
  data: EventData[T],
  options: { applicationId?: string; occurredAt?: Date } = {},
): Promise<string> {
  const [id] = await recordEvents(tx, [{ type, data, ...options } as NewEvent]);
  return id!;
}
