// An event of the log as GET /events returns it (CONTRACT §14): `data` as the webhook body carries it.
import { z } from "zod";
import { EVENT_TYPES } from "../../events/catalog.ts";
import { encodeEventCursor, type LoggedEventJson } from "../../events/event-log.ts";

export const eventViewSchema = z
  .object({
    id: z.string().describe("The event id: a webhook delivery's eventId"),
    type: z.enum(EVENT_TYPES),
    occurredAt: z.iso.datetime(),
    cursor: z.string().describe("Opaque; `after` it, a read resumes with the events committed after this one"),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: "Event" });

/**
 * The view's JSON text (the schema's fields, in its order), `data` as the log holds it: it was
 * written by JSON.stringify (outbox.ts), so the text is the one a parse and a stringify would give.
 * The other values need no escaping: a uuid, a catalogue type, a timestamp as `occurredAtIso`
 * writes it and a base64url cursor (JSON.stringify of each was two fifths of this function's time).
 */
export const eventViewJson = (e: LoggedEventJson): string =>
  `{"id":"${e.eventId}","type":"${e.eventType}","occurredAt":"${e.timestamp}","cursor":"${encodeEventCursor(e.position)}","data":${e.dataJson}}`;
