// An event of the log as GET /events returns it (CONTRACT §14): `data` as the webhook body carries it.
import { z } from "zod";
import { EVENT_TYPES } from "../../events/catalog.ts";
import { encodeEventCursor, type LoggedEvent } from "../../events/event-log.ts";

export const eventViewSchema = z
  .object({
    id: z.string().describe("The event id: a webhook delivery's eventId"),
    type: z.enum(EVENT_TYPES),
    occurredAt: z.iso.datetime(),
    cursor: z.string().describe("Opaque; `after` it, a read resumes with the events committed after this one"),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: "Event" });

export type EventView = z.infer<typeof eventViewSchema>;

export const toEventView = (e: LoggedEvent): EventView => ({
  id: e.eventId,
  type: e.eventType,
  occurredAt: e.timestamp,
  cursor: encodeEventCursor(e.position),
  data: e.data as unknown as Record<string, unknown>,
});
