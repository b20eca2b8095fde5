// What a list of applications shows of each (counts, latest scans, pages of scans and
// vulnerabilities) read for MANY applications in ONE statement: each read is a correlated scalar
// subquery over the application `a.id` that aggregates in Postgres and returns JSON, so a dashboard
// of N applications costs one statement whatever N and whatever it asks for.
// The reads themselves are defined next to their resource (scans/, vulnerabilities/).
import type pg from "pg";
import { Prisma } from "../generated/prisma/client.ts";
import { decodeCursor, type PageRequest } from "./pagination.ts";

export interface PerApplicationRead<T> {
  /** Equal keys are the same read: asked for by several fields, computed once. */
  key: string;
  /** A scalar subquery over the application `a.id`. */
  sql: Prisma.Sql;
  /** Its value for one application (null when the subquery found no row). */
  decode: (value: unknown) => T;
}

/** For each read (by key), its value per application. */
export type PerApplicationValues = Map<string, Map<string, unknown>>;

export async function readPerApplication(
  pool: pg.Pool,
  applicationIds: readonly string[],
  reads: readonly PerApplicationRead<unknown>[],
): Promise<PerApplicationValues> {
  const values: PerApplicationValues = new Map(reads.map((r) => [r.key, new Map()]));
  if (applicationIds.length === 0 || reads.length === 0) return values;
  const columns = Prisma.join(reads.map((r, i) => Prisma.sql`(${r.sql}) AS ${Prisma.raw(`r${i}`)}`));
  const query = Prisma.sql`SELECT a.id::text AS id, ${columns} FROM unnest(${[...applicationIds]}::uuid[]) AS a(id)`;
  const text = query.text;
  const { rows } = await pool.query<Record<string, unknown>>({ name: statementName(text), text, values: query.values });
  for (const row of rows) {
    reads.forEach((read, i) => values.get(read.key)!.set(row.id as string, read.decode(row[`r${i}`])));
  }
  return values;
}

// A dashboard sends the same few shapes again and again: each is a named statement, parsed and
// planned once per connection. Shapes past the first MAX_NAMED run unnamed, so no client can make
// every connection hold an unbounded number of plans.
const MAX_NAMED = 200;
const names = new Map<string, string>();

function statementName(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_NAMED) names.set(text, (name = `per-application-${names.size}`));
  return name;
}

// Building blocks for the reads.

/** What every row carries whatever was asked for: its identity, its parent and its cursor. */
const ALWAYS = ["id", "applicationId", "createdAt"];

/**
 * The select list of a row: the columns of `fields` (the fields the caller will read; unknown
 * names are ignored) plus ALWAYS, or every column when `fields` is omitted. A dashboard showing a
 * title and a severity thus never carries 20,000-character descriptions.
 */
export function projection(columns: Readonly<Record<string, string>>, fields?: readonly string[]): string {
  const wanted = fields
    ? Object.keys(columns).filter((f) => ALWAYS.includes(f) || fields.includes(f))
    : Object.keys(columns);
  return wanted.map((f) => `${columns[f]} AS "${f}"`).join(", ");
}

/** Keyset condition of a page (newest first), for a table aliased `t`. */
function afterCursorSql(page: PageRequest): Prisma.Sql {
  if (!page.cursor) return Prisma.empty;
  const key = decodeCursor(page.cursor);
  return Prisma.sql`AND (t.created_at, t.id) < (${key.createdAt}::timestamptz, ${key.id}::uuid)`;
}

/** `limit + 1` rows of a page aggregated newest first (the extra row says whether more remain; toPage). */
export function pageRowsSql(columns: string, table: string, condition: Prisma.Sql, page: PageRequest): Prisma.Sql {
  return Prisma.sql`SELECT json_agg(r ORDER BY r."createdAt" DESC, r.id DESC) FROM (
    SELECT ${Prisma.raw(columns)} FROM ${Prisma.raw(table)} t
     WHERE t.application_id = a.id AND ${condition} ${afterCursorSql(page)}
     ORDER BY t.created_at DESC, t.id DESC LIMIT ${page.limit + 1}) r`;
}

/** JSON rows to the domain's rows: timestamps become Dates, the rest is as JSON gave it. */
export function reviveRows<T>(value: unknown, dateFields: readonly string[]): T[] {
  const rows = (value ?? []) as Record<string, unknown>[];
  for (const row of rows) {
    for (const field of dateFields) if (typeof row[field] === "string") row[field] = new Date(row[field] as string);
  }
  return rows as T[];
}

export const countOf = (value: unknown): number => Number(value ?? 0);
