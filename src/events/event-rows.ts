// Events as the outbox's INSERT takes them (outbox.ts): a JSON array, one element per event, each
// with its id. Built apart from the INSERT so that a worker thread can build them too (a VEX
// apply's 10,000, src/domain/vulnerabilities/vex-plan.ts) without the database's modules.
import { newId } from "../ids.ts";
import type { EventData, EventType } from "./catalog.ts";

export interface NewEvent<T extends EventType = EventType> {
  type: T;
  data: EventData[T];
  applicationId?: string;
  occurredAt?: Date;
}

export interface EventRow {
  id: string;
  type: EventType;
  applicationId: string | null;
  data: unknown;
  occurredAt: string;
}

export const eventRows = (events: readonly NewEvent[]): EventRow[] =>
  events.map((e) => ({
    id: newId(),
    type: e.type,
    applicationId: e.applicationId ?? null,
    data: e.data,
    occurredAt: (e.occurredAt ?? new Date()).toISOString(),
  }));
