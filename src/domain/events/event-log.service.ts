// Reading the event log (docs/spec/CONTRACT.md §14): pages of it for GET /events and the GraphQL `events` query,
// oldest first, after a cursor, only the event types whose read scope the caller has and the events
// its teams see (§17); and the replay a subscription that resumes with a cursor starts with.
import { hasScope, requireActor, requireAnyScope, type Scope } from "../../auth/scopes.ts";
import { EVENT_READ_SCOPE, EVENT_TYPES, type EventType } from "../../events/catalog.ts";
import {
  decodeEventCursor,
  encodeEventCursor,
  readHead,
  readLog,
  readRenderedLog,
  type LoggedEvent,
  type LogPage,
  type LogRead,
} from "../../events/event-log.ts";
import { turnAtOnce, type ReplayRest } from "../../events/replay-pacing.ts";
import { cursorExpired, invalid } from "../../errors.ts";
import { viewerTeams } from "../access/viewer.ts";
import type { ServiceContext } from "../context.ts";
import { parsePageRequest } from "../pagination.ts";
import { EVENT_VIEW_PAGES } from "./event.view.ts";
import {
  authorizeEventTypes,
  openEventSubscription,
  requireWellFormedApplicationId,
  type EventSubscriptionFilter,
} from "./event-subscriptions.ts";

/**
 * Log entries one read looks at, at most, when filters leave most of them out: a page of a sparse
 * filter may then hold fewer events than asked (even none) and still announce a next page, so that no
 * read scans the whole log.
 */
export const SCAN_LIMIT = 10_000;

export interface EventLogQuery {
  after?: string;
  /** Only these types; every type the caller may read when absent. */
  types?: readonly EventType[];
  applicationId?: string;
  /** 1–500, 100 when absent (as every list); checked after the scopes. */
  limit?: unknown;
}

export interface EventLogPage<Events = LoggedEvent[]> {
  events: Events;
  /** Where to read on from when more events follow now; null once the read reached the end of the log. */
  nextCursor: string | null;
  /** Where this page ends (its last event, or as far as it looked): `after` for the next read. */
  endCursor: string;
  /** The page size asked for. */
  limit: number;
}

/** The types the caller asks for, all of them readable (else 403), or every type it may read. */
function readableTypes(ctx: ServiceContext, types: readonly EventType[] | undefined): readonly EventType[] {
  if (types !== undefined) {
    authorizeEventTypes(ctx, types);
    return [...new Set(types)];
  }
  const actor = requireAnyScope(ctx.actor, EVENT_READ_SCOPES);
  return EVENT_TYPES.filter((type) => hasScope(actor, EVENT_READ_SCOPE[type]));
}

/** The read scopes of the event types: reading the log needs at least one of them. */
export const EVENT_READ_SCOPES: readonly Scope[] = [...new Set(Object.values(EVENT_READ_SCOPE))];

/** The types to filter the log on; none when they are all of them. */
const narrowing = (types: readonly EventType[]) =>
  EVENT_TYPES.every((type) => types.includes(type)) ? undefined : types;

/** The position of a cursor given as `after`, or a 400. */
export function cursorPosition(cursor: string): number {
  const position = decodeEventCursor(cursor);
  if (position === undefined)
    throw invalid("Invalid cursor", [{ path: "after", message: "Not a cursor this service issued" }]);
  return position;
}

/** Throws when the page says `after` expired (410) or lies beyond the log (400). */
export function checkCursor(after: number | undefined, page: LogPage<unknown>): void {
  if (after === undefined) return;
  if (after < page.prunedThrough) throw cursorExpired();
  if (after > page.head)
    throw invalid("Invalid cursor", [{ path: "after", message: "Not a cursor of this event log" }]);
}

export async function readEvents(ctx: ServiceContext, query: EventLogQuery): Promise<EventLogPage> {
  return readEventsWith(ctx, query, readLog);
}

/** The same page, its events as a JSON array of their views (event.view.ts) in pieces, for GET /events. */
export async function readEventsJson(ctx: ServiceContext, query: EventLogQuery): Promise<EventLogPage<string[]>> {
  return readEventsWith(ctx, query, (pool, read) => readRenderedLog(pool, read, EVENT_VIEW_PAGES));
}

async function readEventsWith<Events>(
  ctx: ServiceContext,
  query: EventLogQuery,
  read: (pool: ServiceContext["pool"], read: LogRead) => Promise<LogPage<Events>>,
): Promise<EventLogPage<Events>> {
  const types = readableTypes(ctx, query.types);
  const { limit } = parsePageRequest({ limit: query.limit });
  const after = query.after === undefined ? undefined : cursorPosition(query.after);
  requireWellFormedApplicationId(query.applicationId);
  const page = await read(ctx.pool, {
    after,
    types: narrowing(types),
    applicationId: query.applicationId,
    viewer: viewerTeams(requireActor(ctx.actor)),
    limit,
    scanLimit: SCAN_LIMIT,
  });
  checkCursor(after, page);
  const endCursor = encodeEventCursor(page.readThrough);
  return { events: page.events, nextCursor: page.atHead ? null : endCursor, endCursor, limit };
}

/**
 * The cursor of the log's newest event now. A subscription given it as `after` receives every event
 * committed from now on, and has a cursor to resume from before its first payload (a live view that
 * drops then replays what it missed instead of refetching).
 */
export async function headCursor(ctx: ServiceContext): Promise<string> {
  requireAnyScope(ctx.actor, EVENT_READ_SCOPES);
  return encodeEventCursor(await readHead(ctx.pool));
}

/** Events a replay reads per statement. */
const REPLAY_PAGE = 500;
/**
 * How long a replay hands events on before it lets the event loop turn (`rest`). A page is in memory,
 * and handing its events on (GraphQL, then the socket, whose write callbacks come back as microtasks)
 * would otherwise hold the loop for the whole page: live subscribers would wait behind a client
 * catching up.
 */
const REPLAY_SLICE_MS = 0.5;

/**
 * A subscription resuming after `after`: the committed events after it that `filter` keeps, in log
 * order, page after page. Each time a read reaches the end of the log as it then was (`head`),
 * `caughtUp(head)` decides: true ends the replay there (the subscriber goes on with the live events
 * after `head`), false reads on. The first page is read before this resolves, so a bad or expired
 * cursor fails the subscription itself rather than its stream.
 */
export async function openReplay(
  ctx: ServiceContext,
  filter: EventSubscriptionFilter,
  after: string,
  caughtUp: (head: number) => boolean,
  rest: ReplayRest = turnAtOnce,
): Promise<AsyncIterableIterator<LoggedEvent>> {
  const accept = openEventSubscription(ctx, filter);
  const viewer = viewerTeams(requireActor(ctx.actor));
  const read = async (from: number): Promise<LogPage> => {
    const page = await readLog(ctx.pool, {
      after: from,
      types: narrowing(filter.types),
      applicationId: filter.applicationId,
      viewer,
      limit: REPLAY_PAGE,
      scanLimit: SCAN_LIMIT,
    });
    checkCursor(from, page);
    return page;
  };
  let page = await read(cursorPosition(after));
  return (async function* replay() {
    for (;;) {
      // Decided before the page's events are handed on: the live stream must not be past `head` yet.
      const done = page.atHead && caughtUp(page.head);
      let slice = performance.now();
      // Each event is taken off the page as it is handed on. A page held whole until its last event is
      // handed on outlives the young generation's collections; what it holds is then promoted, and left
      // to mark-compact collections, whose pauses live subscribers wait through.
      for (let event = page.events.shift(); event; event = page.events.shift()) {
        if (!accept(event)) continue;
        yield event;
        const busy = performance.now() - slice;
        if (busy > REPLAY_SLICE_MS) {
          await rest(busy);
          slice = performance.now();
        }
      }
      if (done) return;
      page = await read(page.readThrough);
    }
  })();
}
