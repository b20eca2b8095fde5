// The event log (docs/spec/CONTRACT.md §14): every committed event in the order of commit. Writers never number
// events: the fan-out does (dispatcher/fan-out.ts), once their transaction has committed, one batch at
// a time under the event_log_head row's lock, so positions become visible in the order they are
// handed out. A reader that has read up to position P therefore never finds a new event at or before
// P, however long the transaction that wrote it was open. Cursors are positions, opaque to clients.
import type pg from "pg";
import type { EventAudience } from "../domain/access/viewer.ts";
import { AUDIT_EVENT_TYPES, EVENT_TYPES, isEventType, type EventEnvelope, type EventType } from "./catalog.ts";

/** NOTIFYed by the fan-out that extends the log, with the new head position. */
export const EVENT_LOG_CHANNEL = "appsec_event_log";

/** An event with its place in the log. */
export interface LoggedEvent extends EventEnvelope {
  position: number;
  applicationId: string | null;
  /** Who may see it (CONTRACT §17), as written with it (outbox.ts). */
  audience: EventAudience;
}

/** An events row with its position, as the log's statements return it. */
export interface LoggedEventRow {
  id: string;
  type: string;
  application_id: string | null;
  data: unknown;
  /** As `occurredAtIso` selects it. */
  occurred_at: string;
  position: string | number;
  teams: string[] | null;
  teams_all: boolean;
}

/**
 * The select-list item for `column` AS occurred_at, written by Postgres as `toISOString` would
 * write it (UTC, milliseconds: the column is timestamp(3)). Parsing a date per row and writing it out
 * again was a sixth of this process's CPU for a page of the log
 * (bench/notes/2026-11-26-event-times-by-postgres.md).
 */
export const occurredAtIso = (column: string): string => `${isoTimestampSql(column)} AS occurred_at`;

/** A timestamp(3) column as SQL text, written as `toISOString` writes it. */
export const isoTimestampSql = (column: string): string =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The row as consumers see it; undefined for a type this version does not know. */
export function toLoggedEvent(row: LoggedEventRow): LoggedEvent | undefined {
  if (!isEventType(row.type)) return undefined;
  return {
    eventId: row.id,
    eventType: row.type,
    timestamp: row.occurred_at,
    data: row.data as LoggedEvent["data"],
    position: Number(row.position),
    applicationId: row.application_id,
    audience: { teams: row.teams, teamsAll: row.teams_all },
  };
}

// A cursor is the position, 8 bytes big-endian behind a version byte, in base64url: 12 characters.
const CURSOR_VERSION = 1;
const CURSOR = /^[A-Za-z0-9_-]{12}$/;

const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** Three bytes (24 bits) as four base64url characters. */
const base64urlOf24 = (bits: number): string =>
  BASE64URL[(bits >>> 18) & 63]! +
  BASE64URL[(bits >>> 12) & 63]! +
  BASE64URL[(bits >>> 6) & 63]! +
  BASE64URL[bits & 63]!;

/**
 * The cursor of a position: its nine bytes taken three at a time, by arithmetic rather than through a
 * Buffer and a BigInt (a replay encodes one per event: 0.11–0.25 µs each against 0.34–0.65 µs).
 */
export function encodeEventCursor(position: number): string {
  if (!Number.isSafeInteger(position) || position < 0) throw new RangeError(`not a log position: ${position}`);
  const high = Math.floor(position / 2 ** 32); // under 2^21
  const low = position >>> 0;
  return (
    base64urlOf24((CURSOR_VERSION << 16) | (high >>> 16)) +
    base64urlOf24(((high & 0xffff) << 8) | (low >>> 24)) +
    base64urlOf24(low & 0xffffff)
  );
}

/** `encodeEventCursor` in SQL, for a bigint position expression. */
export const eventCursorSql = (position: string): string =>
  `translate(encode(decode('${CURSOR_VERSION.toString(16).padStart(2, "0")}', 'hex') || int8send(${position}), 'base64'), '+/', '-_')`;

/** The position a cursor stands for, or undefined when it is not a cursor this service issues. */
export function decodeEventCursor(cursor: string): number | undefined {
  if (!CURSOR.test(cursor)) return undefined;
  const bytes = Buffer.from(cursor, "base64url");
  if (bytes.length !== 9 || bytes[0] !== CURSOR_VERSION || bytes.toString("base64url") !== cursor) return undefined;
  const position = bytes.readBigUInt64BE(1);
  return position <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(position) : undefined;
}

export interface LogRead {
  /** Read after this position; from the oldest event kept when undefined. */
  after?: number;
  types?: readonly EventType[];
  applicationId?: string;
  /**
   * Only the events these teams see (visible_to, CONTRACT §17), and nothing for an `applicationId`
   * they do not see; null or absent: every event (an org-wide reader), with the statements as they
   * were before teams.
   */
  viewer?: readonly string[] | null;
  /** Events to return at most. */
  limit: number;
  /** Log entries to look at at most, matching or not: what bounds a sparse filter's read. */
  scanLimit: number;
}

export interface LogPage<Events = LoggedEvent[]> {
  /** The matching events, in log order. */
  events: Events;
  /** Everything up to this position has been looked at: the cursor to read on from. */
  readThrough: number;
  /** Whether the read reached the end of the log as it was when read. */
  atHead: boolean;
  head: number;
  /** Retention has deleted the log up to here: a cursor before it has expired. */
  prunedThrough: number;
}

// One statement, so one snapshot: the head, the retention mark and the events agree (retention
// deletes and moves its mark in one statement too). The scan reads only positions and the columns
// the filters need; the events' data is read for the matches alone. The marks are scalar subqueries:
// a join of the one-row tables, estimated before they are analyzed at thousands of rows each, made
// the plan costly enough for Postgres to JIT-compile it, a second per read.
const MARKS =
  "SELECT (SELECT position FROM event_log_head) AS head, (SELECT pruned_through FROM event_log_retention) AS pruned_through";

/**
 * MARKS for a read of the types `$3` (NULL: all): one of the audit trail's types alone reads from the
 * audit mark, as retention keeps them longer (event-retention.ts).
 */
const MARKS_FOR_TYPES = `SELECT (SELECT position FROM event_log_head) AS head,
  (SELECT CASE WHEN $3::text[] <@ ARRAY['${AUDIT_EVENT_TYPES.join("','")}'] THEN audit_pruned_through ELSE pruned_through END
     FROM event_log_retention) AS pruned_through`;

/** `, n`: a page's events numbered from 1 in log order, which the rendered reads group by (`alias` their row). */
const numbering = (alias: string) => `, row_number() OVER (ORDER BY ${alias}.position) AS n`;

/**
 * The filtered read up to the select list: `marks m`, then `matched x JOIN events e`, one row when none
 * matched; `numbered`, `x.n` numbers the matches. With `viewer` (the parameter holding a confined
 * reader's teams), only what it sees: the events visible_to it, and none of an application it does
 * not see now (a filter naming another team's application matches nothing, even its events from
 * before it moved there).
 */
const READ_FILTERED = (select: string, numbered = false, viewer?: string) => `
  WITH marks AS (${MARKS_FOR_TYPES}),
  scanned AS (
    SELECT e.position, e.type, e.application_id${viewer ? ", e.teams, e.teams_all" : ""} FROM events e
     WHERE e.position > greatest($1::bigint, (SELECT pruned_through FROM marks))
     ORDER BY e.position
     LIMIT $2
  ),
  matched AS (
    SELECT s.position${numbered ? numbering("s") : ""} FROM scanned s
     WHERE ($3::text[] IS NULL OR s.type = ANY ($3::text[])) AND ($4::uuid IS NULL OR s.application_id = $4::uuid)${viewer ? seenBy(viewer) : ""}
     ORDER BY s.position
     LIMIT $5
  )
  SELECT m.head, m.pruned_through, (SELECT count(*) FROM scanned) AS scanned, (SELECT max(position) FROM scanned) AS scanned_through, ${select}
    FROM marks m
    LEFT JOIN (matched x JOIN events e ON e.position = x.position) ON true`;

/** READ_FILTERED's conditions for a confined reader, whose teams are `viewer` (an application's test is an InitPlan: once per read). */
const seenBy = (viewer: string) => `
       AND visible_to(s.teams, s.teams_all, ${viewer}::text[])
       AND ($4::uuid IS NULL OR NOT EXISTS (SELECT 1 FROM applications a
                                             WHERE a.id = $4::uuid AND (a.owner IS NULL OR NOT a.owner = ANY (${viewer}::text[]))))`;

// The same read when nothing is filtered out: the page is all it scans, read in one pass, and the
// count and the last position come from its rows. The general statement's second look-up of each
// event by position, and the materialized page its counts are taken from, were about a third of the
// time a page of 500 took (bench/notes/2026-11-27-fan-out-function.md). Up to the select list:
// `m`'s marks, then the page `p` (`numbered`, `p.n` numbering its events), one row when it is
// empty.
const READ_UNFILTERED = (select: string, numbered = false, audience = false) => `
  SELECT m.head, m.pruned_through, ${select}
    FROM (${MARKS}) m
    LEFT JOIN LATERAL (
      SELECT e.id, e.type, e.application_id, e.data, e.occurred_at, e.position${audience ? ", e.teams, e.teams_all" : ""}${numbered ? numbering("e") : ""} FROM events e
       WHERE e.position > greatest($1::bigint, m.pruned_through)
       ORDER BY e.position
       LIMIT $2
    ) p ON true`;

/** A read's statements: for a filtered read, for a read of everything, and for a confined reader's (LogRead.viewer). */
export interface LogStatements {
  filtered: pg.QueryConfig;
  unfiltered: pg.QueryConfig;
  confined: pg.QueryConfig;
}

/** The columns of a LoggedEventRow of the events row `e`. */
const loggedColumns = (e: string) =>
  `${e}.id, ${e}.type, ${e}.application_id, ${e}.data, ${occurredAtIso(`${e}.occurred_at`)}, ${e}.position, ${e}.teams, ${e}.teams_all`;

/** The read whose rows are the page's events, parsed here. */
const PARSED_LOG: LogStatements = {
  filtered: {
    name: "read-event-log",
    text: `${READ_FILTERED(loggedColumns("e"))}\n   ORDER BY e.position`,
  },
  unfiltered: {
    name: "read-event-log-unfiltered",
    text: `${READ_UNFILTERED(loggedColumns("p"), false, true)}\n   ORDER BY p.position`,
  },
  confined: {
    name: "read-event-log-confined",
    text: `${READ_FILTERED(loggedColumns("e"), false, "$6")}\n   ORDER BY e.position`,
  },
};

/** Only the filtered statement says what it scanned: the unfiltered one scans its page. */
type ReadRow = Partial<LoggedEventRow> & {
  head: string;
  pruned_through: string;
  scanned?: string;
  scanned_through?: string | null;
};

/** A page of the log after `read.after` (within what retention keeps). */
export async function readLog(pool: pg.Pool, read: LogRead): Promise<LogPage> {
  const { rows } = await pool.query<ReadRow>(statementOf(read, PARSED_LOG));
  const marks = rows[0]!;
  const matched = rows.filter((row) => row.id != null) as (ReadRow & LoggedEventRow)[];
  const events = matched.map(toLoggedEvent).filter((e) => e !== undefined);
  const bounds = pageBounds(read, {
    head: marks.head,
    prunedThrough: marks.pruned_through,
    matched: matched.length,
    lastMatched: matched.at(-1)?.position ?? null,
    scanned: marks.scanned,
    scannedThrough: marks.scanned_through ?? null,
  });
  return { events, ...bounds };
}

const confinedViewer = (read: LogRead): readonly string[] | undefined => read.viewer ?? undefined;

const isFiltered = (read: LogRead): boolean =>
  read.types !== undefined || read.applicationId !== undefined || confinedViewer(read) !== undefined;

/** How many entries the read looks at: a filtered read up to its scan limit, an unfiltered one its page. */
const scanLimitOf = (read: LogRead): number => (isFiltered(read) ? Math.max(read.scanLimit, read.limit) : read.limit);

/**
 * The statement for `read` with its parameters: the filtered statements' $1–$5 (and the confined
 * ones' viewer, $6) or the unfiltered ones' $1–$2, then `more`.
 */
function statementOf(read: LogRead, statements: LogStatements, more: unknown[] = []): pg.QueryConfig {
  if (!isFiltered(read)) return { ...statements.unfiltered, values: [read.after ?? 0, read.limit, ...more] };
  const viewer = confinedViewer(read);
  const filters = [read.after ?? 0, scanLimitOf(read), read.types ?? null, read.applicationId ?? null, read.limit];
  if (viewer !== undefined) return { ...statements.confined, values: [...filters, viewer, ...more] };
  return { ...statements.filtered, values: [...filters, ...more] };
}

/** What a page's statement counted, as Postgres sends it (bigints as text). */
interface PageCounts {
  head: string | number;
  prunedThrough: string | number;
  /** Events matching the filters (those of a type this version does not know included). */
  matched: string | number;
  lastMatched: string | number | null;
  /** Entries looked at, matching or not; only the filtered statements count them (the others scan their page). */
  scanned?: string | number;
  scannedThrough: string | number | null;
}

/** Where a page read ends, from what its statement counted. */
function pageBounds(read: LogRead, counts: PageCounts): Omit<LogPage<never>, "events"> {
  const head = Number(counts.head);
  const full = Number(counts.matched) === read.limit;
  // A full page ends at its last event; else the read went as far as it scanned, or to the head.
  const atHead = !full && Number(counts.scanned ?? counts.matched) < scanLimitOf(read);
  const readThrough = full
    ? Number(counts.lastMatched)
    : atHead
      ? Math.max(head, read.after ?? 0)
      : Number(counts.scannedThrough);
  return { readThrough, atHead, head, prunedThrough: Number(counts.prunedThrough) };
}

/**
 * Events per row of a rendered page. A page of 500 in one text (~200 KB) was a string in V8's
 * large-object space: each one mapped fresh memory (1 ms of faults and copying, against 0.03 ms for
 * the same bytes in two strings) and grew the old generation
 * (bench/notes/2026-11-28-get-events-strings.md). Rows of 50 events stay far below that size
 * (128 KiB) unless events are large.
 */
const RENDERED_ROW_EVENTS = 50;

/**
 * A read whose events Postgres writes out itself, as JSON text, `render` being the SQL of one event's
 * JSON for an events row `e`; `name` names the statements (prepared once per connection). For a
 * reader that sends the page on as it is (GET /events), which then neither parses rows nor builds a
 * string per event: those were most of a page's CPU in this process and most of what it allocated.
 * Each row holds `RENDERED_ROW_EVENTS` events' JSON, comma-separated (null when none is of a type this
 * version knows), and the page's counts, the same on every row.
 */
export function renderedLog(name: string, render: (e: string) => string): LogStatements {
  const page = (e: string, known: string) =>
    `sum(count(${e}.position)) OVER () AS matched, max(max(${e}.position)) OVER () AS last_matched,
     string_agg(${render(e)}, ',' ORDER BY ${e}.position) FILTER (WHERE ${e}.type = ANY (${known}::text[])) AS events`;
  const inRows = (n: string) =>
    `GROUP BY m.head, m.pruned_through, (${n} - 1) / ${RENDERED_ROW_EVENTS}\n   ORDER BY (${n} - 1) / ${RENDERED_ROW_EVENTS}`;
  return {
    filtered: { name: `${name}-read-event-log`, text: `${READ_FILTERED(page("e", "$6"), true)}\n   ${inRows("x.n")}` },
    unfiltered: {
      name: `${name}-read-event-log-unfiltered`,
      text: `${READ_UNFILTERED(page("p", "$3"), true)}\n   ${inRows("p.n")}`,
    },
    confined: {
      name: `${name}-read-event-log-confined`,
      text: `${READ_FILTERED(page("e", "$7"), true, "$6")}\n   ${inRows("x.n")}`,
    },
  };
}

interface RenderedRow {
  head: string;
  pruned_through: string;
  scanned?: string;
  scanned_through?: string | null;
  matched: string;
  last_matched: string | null;
  events: string | null;
}

/**
 * A page of the log after `read.after`, its events (of the types this version knows) as a JSON array
 * in pieces, to be written one after the other: joined, they would make one large string again.
 */
export async function readRenderedLog(
  pool: pg.Pool,
  read: LogRead,
  statements: LogStatements,
): Promise<LogPage<string[]>> {
  // The types this version knows come after the read's own parameters ($6, $3; $7 for a confined reader).
  const { rows } = await pool.query<RenderedRow>(statementOf(read, statements, [EVENT_TYPES]));
  const row = rows[0]!;
  const bounds = pageBounds(read, {
    head: row.head,
    prunedThrough: row.pruned_through,
    matched: row.matched,
    lastMatched: row.last_matched,
    scanned: row.scanned,
    scannedThrough: row.scanned_through ?? null,
  });
  const items = rows.flatMap((r) => (r.events === null ? [] : [r.events]));
  const pieces =
    items.length === 0
      ? ["[]"]
      : items.map((item, i) => `${i === 0 ? "[" : ","}${item}${i === items.length - 1 ? "]" : ""}`);
  return { events: pieces, ...bounds };
}

/** The position of the last event in the log. */
export async function readHead(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ position: string }>("SELECT position FROM event_log_head");
  return Number(rows[0]!.position);
}
