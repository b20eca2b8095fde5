import { ID_PATTERN } from "../../ids.ts";
import { z } from "zod";
import { eventViewSchema } from "../../domain/events/event.view.ts";
import { EVENT_READ_SCOPES, readEventsJson } from "../../domain/events/event-log.service.ts";
import { EVENT_TYPES, isEventType, type EventType } from "../../events/catalog.ts";
import { invalid } from "../../errors.ts";
import { pageQueryShape, sendJsonArray, singleQuery } from "../list-response.ts";
import type { RouteDefinition } from "../route.ts";

const oneType = `(?:${EVENT_TYPES.map((t) => t.replaceAll(".", "\\.")).join("|")})`;
/** What parseTypes takes, for the document: known types, comma-separated, spaces around them allowed. */
const typesPattern = `^\\s*${oneType}\\s*(?:,\\s*${oneType}\\s*)*$`;

/** `types=scan.completed,policy.violated`: a comma-separated list of known event types. */
function parseTypes(value: string | undefined): EventType[] | undefined {
  if (value === undefined) return undefined;
  const types = value.split(",").map((t) => t.trim());
  const unknown = types.filter((t) => !isEventType(t));
  if (unknown.length > 0 || types.length === 0) {
    throw invalid("Invalid query parameters", [
      { path: "types", message: `Must list event types, comma-separated: ${EVENT_TYPES.join(", ")}` },
    ]);
  }
  return types as EventType[];
}

export const eventRoutes: RouteDefinition[] = [
  {
    operationId: "ListEvents",
    method: "GET",
    path: "/events",
    summary: "Read the event log, oldest first, after a cursor",
    description:
      "Committed events in the order they were committed, each once. Resume with `after` = the cursor of the last event read " +
      "(or the one in Link rel=next). Only the types whose read scope the token has; asking for another is 403. " +
      "A filtered page may hold fewer events than `limit` and still link to a next page. A cursor older than what " +
      "EVENT_RETENTION_DAYS keeps is 410 (cursor_expired).",
    tag: "Events",
    anyScope: EVENT_READ_SCOPES,
    query: z.object({
      after: z
        .string()
        .optional()
        .describe("A cursor: only events committed after it; from the oldest kept when absent"),
      types: z
        .string()
        .meta({ pattern: typesPattern })
        .optional()
        .describe(`Comma-separated event types (${EVENT_TYPES.join(", ")}); every type the token may read when absent`),
      applicationId: z
        .string()
        .meta({ format: "uuid", pattern: ID_PATTERN })
        .optional()
        .describe("Only events about this application"),
      limit: pageQueryShape.limit,
    }),
    success: {
      status: 200,
      description: "A page of events, oldest first",
      schema: z.array(eventViewSchema),
      headers: ["Link"],
    },
    errors: [400, 410],
    async handle(ctx, svc) {
      const types = parseTypes(singleQuery(ctx, "types"));
      const page = await readEventsJson(svc, {
        after: singleQuery(ctx, "after"),
        types,
        applicationId: singleQuery(ctx, "applicationId"),
        limit: singleQuery(ctx, "limit"),
      });
      sendJsonArray(ctx, page.nextCursor, page.limit, page.events, "after");
    },
  },
];
