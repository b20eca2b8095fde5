// The hottest reads (GET /applications/{id}, unfiltered pages of GET /applications and their
// count, the dashboard's totalCount) as named prepared statements on pg: planned once per
// connection, and without Prisma's per-query compile, which took about a fifth of the service's
// CPU under that load (bench/README.md). Rows come back in the shape of Prisma's Application, so
// callers cannot tell the two apart.
import type pg from "pg";
import type { Application } from "../../generated/prisma/client.ts";
import { decodeCursor, type PageRequest } from "../pagination.ts";

const COLUMNS = `id, name, description, criticality::text AS criticality, owner, repo_url AS "repoUrl",
  service_url AS "serviceUrl", language, tags, created_at AS "createdAt", updated_at AS "updatedAt"`;

const BY_ID = `SELECT ${COLUMNS} FROM applications WHERE id = $1::uuid`;
const NEWEST = `SELECT ${COLUMNS} FROM applications ORDER BY created_at DESC, id DESC LIMIT $1`;
const NEWEST_AFTER = `SELECT ${COLUMNS} FROM applications WHERE (created_at, id) < ($2, $3::uuid)
  ORDER BY created_at DESC, id DESC LIMIT $1`;

const COUNT = `SELECT count(*)::int AS n FROM applications`;

export async function countAllApplications(pool: pg.Pool): Promise<number> {
  return (await pool.query<{ n: number }>({ name: "applications-count", text: COUNT })).rows[0]!.n;
}

export async function findApplication(pool: pg.Pool, id: string): Promise<Application | null> {
  const { rows } = await pool.query<Application>({ name: "application-by-id", text: BY_ID, values: [id] });
  return rows[0] ?? null;
}

/** Newest first, one row more than the page so the caller learns whether more remain (as findPage). */
export async function findApplicationsNewestFirst(pool: pg.Pool, page: PageRequest): Promise<Application[]> {
  if (!page.cursor) {
    return (await pool.query<Application>({ name: "applications-newest", text: NEWEST, values: [page.limit + 1] })).rows;
  }
  const after = decodeCursor(page.cursor);
  const values = [page.limit + 1, after.createdAt, after.id];
  return (await pool.query<Application>({ name: "applications-newest-after", text: NEWEST_AFTER, values })).rows;
}
