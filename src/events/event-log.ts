// The event log (CONTRACT §14): every committed event in the order of commit. Writers never number
// events: the fan-out does (dispatcher/fan-out.ts), once their transaction has committed, one batch at
// a time under the event_log_head row's lock, so positions become visible in the order they are
// handed out. A reader that has read up to position P therefore never finds a new event at or before
// P, however long the transaction that wrote it was open. Cursors are positions, opaque to clients.
import pg from "pg";
import { isEventType, type EventEnvelope, type EventType } from "./catalog.ts";

/** NOTIFYed by the fan-out that extends the log, with the new head position. */
export const EVENT_LOG_CHANNEL = "appsec_event_log";

/** An event with its place in the log. */
export interface LoggedEvent extends EventEnvelope {
  position: number;
  applicationId: string | null;
}

/**
 * An event whose `data` is the JSON text the log holds, for a reader that writes it out as it is
 * (GET /events): parsing it only to write it out again was most of what a page cost (bench/README.md).
 */
export type LoggedEventJson = Omit<LoggedEvent, "data"> & { dataJson: string };

/** An events row with its position, as the log's statements return it. */
export interface LoggedEventRow {
  id: string;
  type: string;
  application_id: string | null;
  data: unknown;
  /** As `occurredAtIso` selects it. */
  occurred_at: string;
  position: string | number;
}

/**
 * The select-list item for `column` AS occurred_at, written by Postgres as `toISOString` would
 * write it (UTC, milliseconds: the column is timestamp(3)). Parsing a date per row and writing it out
 * again was a sixth of this process's CPU for a page of the log (bench/README.md).
 */
export const occurredAtIso = (column: string): string => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS occurred_at`;

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
  };
}

/** The row with its `data` as JSON text (read with JSON_AS_TEXT); undefined for a type this version does not know. */
function toLoggedEventJson(row: LoggedEventRow): LoggedEventJson | undefined {
  const event = toLoggedEvent(row);
  if (event === undefined) return undefined;
  const { data, ...envelope } = event;
  return { ...envelope, dataJson: data as unknown as string };
}

// A cursor is the position, 8 bytes big-endian behind a version byte, in base64url: 12 characters.
const CURSOR_VERSION = 1;
const CURSOR = /^[A-Za-z0-9_-]{12}$/;

export function encodeEventCursor(position: number): string {
  const bytes = Buffer.alloc(9);
  bytes[0] = CURSOR_VERSION;
  bytes.writeBigUInt64BE(BigInt(position), 1);
  return bytes.toString("base64url");
}

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
  /** Events to return at most. */
  limit: number;
  /** Log entries to look at at most, matching or not: what bounds a sparse filter's read. */
  scanLimit: number;
}

export interface LogPage<E = LoggedEvent> {
  /** The matching events, in log order. */
  events: E[];
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
const READ_LOG = `
  WITH marks AS (
    SELECT (SELECT position FROM event_log_head) AS head, (SELECT pruned_through FROM event_log_retention) AS pruned_through
  ),
  scanned AS (
    SELECT e.position, e.type, e.application_id FROM events e
     WHERE e.position > greatest($1::bigint, (SELECT pruned_through FROM marks))
     ORDER BY e.position
     LIMIT $2
  ),
  matched AS (
    SELECT s.position FROM scanned s
     WHERE ($3::text[] IS NULL OR s.type = ANY ($3::text[])) AND ($4::uuid IS NULL OR s.application_id = $4::uuid)
     ORDER BY s.position
     LIMIT $5
  )
  SELECT m.head, m.pruned_through, (SELECT count(*) FROM scanned) AS scanned, (SELECT max(position) FROM scanned) AS scanned_through,
         e.id, e.type, e.application_id, e.data, ${occurredAtIso("e.occurred_at")}, e.position
    FROM marks m
    LEFT JOIN (matched x JOIN events e ON e.position = x.position) ON true
   ORDER BY e.position`;

// The same read when nothing is filtered out: the page is all it scans, read in one pass, and the
// count and the last position come from its rows. The general statement's second look-up of each
// event by position, and the materialized page its counts are taken from, were about a third of the
// time a page of 500 took (bench/README.md).
const READ_LOG_UNFILTERED = `
  SELECT m.head, m.pruned_through, p.id, p.type, p.application_id, p.data, ${occurredAtIso("p.occurred_at")}, p.position
    FROM (SELECT (SELECT position FROM event_log_head) AS head, (SELECT pruned_through FROM event_log_retention) AS pruned_through) m
    LEFT JOIN LATERAL (
      SELECT e.id, e.type, e.application_id, e.data, e.occurred_at, e.position FROM events e
       WHERE e.position > greatest($1::bigint, m.pruned_through)
       ORDER BY e.position
       LIMIT $2
    ) p ON true
   ORDER BY p.position`;

/** Only the filtered statement says what it scanned: the unfiltered one scans its page. */
type ReadRow = Partial<LoggedEventRow> & { head: string; pruned_through: string; scanned?: string; scanned_through?: string | null };

/** json columns as Postgres sends them, unparsed; every other type as pg parses it by default. */
const JSON_AS_TEXT: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === pg.types.builtins.JSON ? (text: string) => text : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig["getTypeParser"],
};

/** A page of the log after `read.after` (within what retention keeps). */
export async function readLog(pool: pg.Pool, read: LogRead): Promise<LogPage> {
  return readPage(pool, read, toLoggedEvent);
}

/** The same page, each event's `data` left as JSON text. */
export async function readLogJson(pool: pg.Pool, read: LogRead): Promise<LogPage<LoggedEventJson>> {
  return readPage(pool, read, toLoggedEventJson, JSON_AS_TEXT);
}

async function readPage<E>(pool: pg.Pool, read: LogRead, toEvent: (row: LoggedEventRow) => E | undefined, types?: pg.CustomTypesConfig): Promise<LogPage<E>> {
  const filtered = read.types !== undefined || read.applicationId !== undefined;
  const scanLimit = filtered ? Math.max(read.scanLimit, read.limit) : read.limit;
  const { rows } = await pool.query<ReadRow>(
    filtered
      ? { name: "read-event-log", text: READ_LOG, values: [read.after ?? 0, scanLimit, read.types ?? null, read.applicationId ?? null, read.limit], types }
      : { name: "read-event-log-unfiltered", text: READ_LOG_UNFILTERED, values: [read.after ?? 0, scanLimit], types },
  );
  const marks = rows[0]!;
  const head = Number(marks.head);
  const prunedThrough = Number(marks.pruned_through);
  const matched = rows.filter((row) => row.id != null) as (ReadRow & LoggedEventRow)[];
  const events = matched.map(toEvent).filter((e) => e !== undefined);
  const scanned = filtered ? Number(marks.scanned) : matched.length;
  const full = matched.length === read.limit;
  // A full page ends at its last event; else the read went as far as it scanned, or to the head.
  const atHead = !full && scanned < scanLimit;
  const readThrough = full
    ? Number(matched.at(-1)!.position)
    : atHead
      ? Math.max(head, read.after ?? 0)
      : Number(marks.scanned_through);
  return { events, readThrough, atHead, head, prunedThrough };
}

/** The position of the last event in the log. */
export async function readHead(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ position: string }>("SELECT position FROM event_log_head");
  return Number(rows[0]!.position);
}
