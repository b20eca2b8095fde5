// The only writer of events. Called inside the transaction of the change an event reports, so a
// committed change always has its event and a rolled-back one never does. The NOTIFY is
// transactional too: listeners hear of the event only once it is committed.
import type { Tx } from "../db/client.ts";
import { newId } from "../ids.ts";
import type { EventData, EventType } from "./catalog.ts";

export const EVENTS_CHANNEL = "appsec_events";

export async function recordEvent<T extends EventType>(
  tx: Tx,
  type: T,
  data: EventData[T],
  options: { applicationId?: string; occurredAt?: Date } = {},
): Promise<string> {
  const id = newId();
  await tx.event.create({
    data: {
      id,
      type,
      applicationId: options.applicationId ?? null,
      data: data as object,
      occurredAt: options.occurredAt ?? new Date(),
    },
  });
  await tx.$executeRaw`SELECT pg_notify(${EVENTS_CHANNEL}, ${id})`;
  return id;
}
