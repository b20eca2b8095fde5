// The only writer of events. Called inside the transaction of the change an event reports, so a
// committed change always has its event and a rolled-back one never does. The NOTIFY is
// transactional too: listeners hear of the events only once they are committed. Its payload is the
// writing transaction's id (stored on each event row), and Postgres folds identical notifications of
// one transaction into one: a scan that records 500 events wakes each listener once, and a listener
// loads that transaction's events in one query.
import type { Tx } from "../db/client.ts";
import { newId } from "../ids.ts";
import type { EventData, EventType } from "./catalog.ts";

export const EVENTS_CHANNEL = "appsec_events";

export interface NewEvent<T extends EventType = EventType> {
  type: T;
  data: EventData[T];
  applicationId?: string;
  occurredAt?: Date;
}

/** Records several events in two statements, whatever their number (a scan may report hundreds). */
export async function recordEvents(tx: Tx, events: readonly NewEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const rows = events.map((e) => ({
    id: newId(),
    type: e.type,
    applicationId: e.applicationId ?? null,
    data: e.data as object,
    occurredAt: e.occurredAt ?? new Date(),
  }));
  const ids = rows.map((r) => r.id);
  await tx.event.createMany({ data: rows });
  await tx.$executeRaw`SELECT pg_notify(${EVENTS_CHANNEL}, pg_current_xact_id()::text)`;
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
