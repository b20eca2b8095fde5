// Keyset pagination, newest first (createdAt desc, then id desc), with an opaque cursor.
import { z } from "zod";
import { invalid } from "../errors.ts";
import { isId } from "../ids.ts";
import { toFieldErrors } from "./validation.ts";

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 500;

export interface PageRequest {
  limit: number;
  cursor?: string;
}

export interface Page<T> {
  items: T[];
  /** Whether rows remain after this page. */
  hasMore: boolean;
  /** Cursor of the next page, or null when this one is the last. */
  readonly nextCursor: string | null;
}

export const emptyPage = <T>(): Page<T> => ({ items: [], hasMore: false, nextCursor: null });

interface CursorKey {
  createdAt: Date;
  id: string;
}

const pageSchema = z.object({
  limit: z.coerce
    .number({ message: "Must be an integer from 1 to 500" })
    .int("Must be an integer from 1 to 500")
    .min(1, "Must be an integer from 1 to 500")
    .max(MAX_LIMIT, "Must be an integer from 1 to 500")
    .default(DEFAULT_LIMIT),
  cursor: z.string().optional(),
});

/** Validates limit/cursor as they come from a query string or GraphQL arguments. */
export function parsePageRequest(input: { limit?: unknown; cursor?: unknown }): PageRequest {
  const result = pageSchema.safeParse({ limit: input.limit ?? undefined, cursor: input.cursor ?? undefined });
  if (!result.success) throw invalid("Invalid pagination parameters", toFieldErrors(result.error));
  if (result.data.cursor !== undefined) decodeCursor(result.data.cursor);
  return result.data;
}

export function encodeCursor(row: CursorKey): string {
  return Buffer.from(JSON.stringify([row.createdAt.toISOString(), row.id])).toString("base64url");
}

export function decodeCursor(cursor: string): CursorKey {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown[];
    const date = new Date(String(createdAt));
    // Only what encodeCursor writes: an exact ISO round trip (rules out dates Postgres cannot hold).
    const issued =
      !Number.isNaN(date.getTime()) &&
      date.getUTCFullYear() >= 1 &&
      /^\d{4}-/.test(String(createdAt)) &&
      date.toISOString() === createdAt;
    if (typeof createdAt === "string" && typeof id === "string" && isId(id) && issued) {
      return { createdAt: date, id };
    }
  } catch {
    // fall through to the validation error
  }
  throw invalid("Invalid pagination parameters", [{ path: "cursor", message: "Not a cursor this service issued" }]);
}

export const newestFirst = [{ createdAt: "desc" as const }, { id: "desc" as const }];

/** Prisma `where` fragment selecting rows strictly after the cursor in newest-first order. */
export function afterCursor(cursor: string | undefined) {
  if (!cursor) return {};
  const key = decodeCursor(cursor);
  return { OR: [{ createdAt: { lt: key.createdAt } }, { createdAt: key.createdAt, id: { lt: key.id } }] };
}

/** Runs a newest-first query for one page; fetches one extra row to learn whether more remain. */
export async function findPage<T extends CursorKey>(
  page: PageRequest,
  find: (args: { where: object; orderBy: typeof newestFirst; take: number }) => Promise<T[]>,
): Promise<Page<T>> {
  return toPage(
    await find({ where: afterCursor(page.cursor), orderBy: newestFirst, take: page.limit + 1 }),
    page.limit,
  );
}

/** A page whose next cursor is encoded when read: a dashboard shows many pages and reads none. */
class KeysetPage<T extends CursorKey> implements Page<T> {
  constructor(
    readonly items: T[],
    readonly hasMore: boolean,
  ) {}

  get nextCursor(): string | null {
    return this.hasMore ? encodeCursor(this.items.at(-1)!) : null;
  }
}

/** A page from up to `limit + 1` newest-first rows: the extra row only says that more remain. */
export function toPage<T extends CursorKey>(rows: T[], limit: number): Page<T> {
  const items = rows.slice(0, limit);
  return new KeysetPage(items, rows.length > limit && items.length > 0);
}
