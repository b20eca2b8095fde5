// The first page of children for MANY parents in one statement (GraphQL lists nested under lists):
// row_number() per parent keeps each parent's newest `limit + 1` rows, so the cost does not grow
// with the number of parents and no parent's rows are loaded beyond its page.
import { Prisma } from "../generated/prisma/client.ts";
import type { Db } from "../db/client.ts";
import { decodeCursor, encodeCursor, type Page, type PageRequest } from "./pagination.ts";

type ChildTable = "scans" | "vulnerabilities";

export async function pageIdsPerParent(
  db: Db,
  table: ChildTable,
  parentIds: readonly string[],
  page: PageRequest,
  condition: Prisma.Sql = Prisma.sql`TRUE`,
): Promise<string[]> {
  if (parentIds.length === 0) return [];
  const key = page.cursor ? decodeCursor(page.cursor) : undefined;
  const cursorSql = key ? Prisma.sql`AND (created_at, id) < (${key.createdAt}, ${key.id}::uuid)` : Prisma.empty;
  const rows = await db.$queryRaw<{ id: string }[]>`
    SELECT id::text FROM (
      SELECT id, row_number() OVER (PARTITION BY application_id ORDER BY created_at DESC, id DESC) AS rn
        FROM ${Prisma.raw(`"${table}"`)}
       WHERE application_id = ANY(${[...parentIds]}::uuid[]) AND ${condition} ${cursorSql}
    ) ranked
    WHERE rn <= ${page.limit + 1}`;
  return rows.map((r) => r.id);
}

/** Splits rows (any order) into newest-first pages per parent. */
export function pagesByParent<T extends { id: string; createdAt: Date; applicationId: string }>(
  parentIds: readonly string[],
  rows: readonly T[],
  limit: number,
): Map<string, Page<T>> {
  const byParent = new Map<string, T[]>(parentIds.map((id) => [id, []]));
  const sorted = [...rows].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1));
  for (const row of sorted) byParent.get(row.applicationId)?.push(row);
  const pages = new Map<string, Page<T>>();
  for (const [parentId, list] of byParent) {
    const items = list.slice(0, limit);
    const last = items.at(-1);
    pages.set(parentId, { items, nextCursor: list.length > limit && last ? encodeCursor(last) : null });
  }
  return pages;
}
