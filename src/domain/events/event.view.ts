// An event of the log as GET /events returns it (docs/spec/CONTRACT.md §14): `data` as the webhook body carries it.
import { z } from "zod";
import { EVENT_TYPES } from "../../events/catalog.ts";
import { eventCursorSql, isoTimestampSql, renderedLog } from "../../events/event-log.ts";

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
 * The view's JSON text for the events row `e`, as SQL (the schema's fields, in its order): GET /events
 * has Postgres write its pages (`EVENT_VIEW_PAGES`). `data` is the text the log holds, written by
 * JSON.stringify (outbox.ts), so it is the text a parse and a stringify would give; the other values
 * need no escaping: a uuid, a catalogue type, a timestamp as toISOString writes it and the event's cursor.
 */
export const eventViewJsonSql = (e: string): string =>
  `'{"id":"' || ${e}.id || '","type":"' || ${e}.type || '","occurredAt":"' || ${isoTimestampSql(`${e}.occurred_at`)} || ` +
  `'","cursor":"' || ${eventCursorSql(`${e}.position`)} || '","data":' || ${e}.data::text || '}'`;

/** Reads of the log whose pages Postgres writes as a JSON array of these views. */
export const EVENT_VIEW_PAGES = renderedLog("event-view", eventViewJsonSql);
