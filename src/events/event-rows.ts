// Events as the outbox's INSERT takes them (outbox.ts): a JSON array, one element per event, each
// with its id. Built apart from the INSERT so that a worker thread can build them too (a VEX
// apply's 10,000, src/domain/vulnerabilities/vex-plan.ts) without the database's modules.
import type { EventAudience } from "../domain/access/viewer.ts";
import { newId } from "../ids.ts";
import type { EventData, EventType } from "./catalog.ts";

export interface NewEvent<T extends EventType = EventType> {
  type: T;
  data: EventData[T];
  applicationId?: string;
  occurredAt?: Date;
  /** Who may see it, when not its application's owner's team (the outbox reads that itself). */
  audience?: EventAudience;
}

export interface EventRow {
  id: string;
  type: EventType;
  applicationId: string | null;
  data: unknown;
  occurredAt: string;
  /** An explicit audience only; absent, the INSERT takes the application's owner (outbox.ts). */
  teams?: readonly string[] | null;
  teamsAll?: boolean;
}

export const eventRows = (events: readonly NewEvent[]): EventRow[] =>
  events.map((e) => {
    const row: EventRow = {
      id: newId(),
      type: e.type,
      applicationId: e.applicationId ?? null,
      data: e.data,
      occurredAt: (e.occurredAt ?? new Date()).toISOString(),
    };
    if (e.audience) {
      row.teams = e.audience.teams;
      row.teamsAll = e.audience.teamsAll;
    }
    return row;
  });
