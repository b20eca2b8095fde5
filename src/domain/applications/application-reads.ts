// The application reads (GET /applications/{id}, pages of GET /applications filtered or not, their
// count for GraphQL's totalCount) as named prepared statements on pg: planned once per connection
// and shape, and without Prisma's per-query compile, which took about a fifth of the service's CPU
// under that load (bench/notes/2026-11-23-rest-reads-off-prisma.md) and made most of its garbage.
// Rows come back in the shape of Prisma's Application, so callers cannot tell the two apart.
import type pg from "pg";
import type { Application } from "../../generated/prisma/client.ts";
import type { ViewerTeams } from "../access/viewer.ts";
import { decodeCursor, type PageRequest } from "../pagination.ts";

/** Every column, named and typed as Prisma's Application field. */
export const APPLICATION_COLUMNS = `id, name, description, criticality::text AS criticality, owner, repo_url AS "repoUrl",
  service_url AS "serviceUrl", language, tags, created_at AS "createdAt", updated_at AS "updatedAt"`;

const BY_ID = `SELECT ${APPLICATION_COLUMNS} FROM applications WHERE id = $1::uuid`;
const VISIBLE_BY_ID = `${BY_ID} AND owner = ANY($2::text[])`;

/** What a list of applications is narrowed to: every condition given must hold. */
export interface ApplicationMatch {
  /** The caller's teams when it is confined to them (docs/spec/CONTRACT.md §17); absent: org-wide. */
  teams?: readonly string[];
  owner?: string;
  /** One of the Criticality enum's values. */
  criticality?: string;
  /** Applications carrying every one of these tags. */
  tags?: readonly string[];
}

/**
 * The WHERE clause of a match (and of a page's keyset), its values numbered from $`first`, and a
 * name for its shape: the few shapes there are (which conditions are present) are each one statement.
 */
function whereOf(
  match: ApplicationMatch,
  first: number,
  cursor?: string,
): { where: string; values: unknown[]; shape: string } {
  const conditions: string[] = [];
  const values: unknown[] = [];
  let shape = "";
  const param = (value: unknown) => `$${first + values.push(value) - 1}`;
  if (match.teams !== undefined) {
    conditions.push(`owner = ANY(${param(match.teams)}::text[])`);
    shape += "v";
  }
  if (match.owner !== undefined) {
    conditions.push(`owner = ${param(match.owner)}`);
    shape += "o";
  }
  if (match.criticality !== undefined) {
    conditions.push(`criticality = ${param(match.criticality)}::"Criticality"`);
    shape += "c";
  }
  if (match.tags?.length) {
    conditions.push(`tags @> ${param(match.tags)}::text[]`);
    shape += "t";
  }
  if (cursor) {
    const after = decodeCursor(cursor);
    conditions.push(`(created_at, id) < (${param(after.createdAt)}, ${param(after.id)}::uuid)`);
    shape += "a";
  }
  return { where: conditions.length ? `WHERE ${conditions.join(" AND ")}` : "", values, shape };
}

/** The application, if `teams` (null: org-wide) see it. */
export async function findApplication(pool: pg.Pool, id: string, teams: ViewerTeams): Promise<Application | null> {
  const { rows } = await pool.query<Application>(
    teams === null
      ? { name: "application-by-id", text: BY_ID, values: [id] }
      : { name: "visible-application-by-id", text: VISIBLE_BY_ID, values: [id, teams] },
  );
  return rows[0] ?? null;
}

/** Newest first, one row more than the page so the caller learns whether more remain (as findPage). */
export async function findApplicationsNewestFirst(
  pool: pg.Pool,
  page: PageRequest,
  match: ApplicationMatch,
): Promise<Application[]> {
  const { where, values, shape } = whereOf(match, 2, page.cursor);
  const text = `SELECT ${APPLICATION_COLUMNS} FROM applications ${where} ORDER BY created_at DESC, id DESC LIMIT $1`;
  return (
    await pool.query<Application>({ name: `applications-page-${shape}`, text, values: [page.limit + 1, ...values] })
  ).rows;
}

export async function countMatchingApplications(pool: pg.Pool, match: ApplicationMatch): Promise<number> {
  const { where, values, shape } = whereOf(match, 1);
  const text = `SELECT count(*)::int AS n FROM applications ${where}`;
  return (await pool.query<{ n: number }>({ name: `applications-count-${shape}`, text, values })).rows[0]!.n;
}
