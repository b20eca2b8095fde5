// The reads of a confined token's subscriptions (those all of whose teams are its own): Prisma has
// no "contained in" test for a list, so these are statements of their own, whose rows come back in
// the shape of Prisma's Webhook. Org-wide callers keep Prisma's reads (webhooks.service.ts).
import type pg from "pg";
import type { Webhook } from "../../generated/prisma/client.ts";
import { decodeCursor, type PageRequest } from "../pagination.ts";
import { webhookVisibleSql } from "./webhook-teams.ts";

const WEBHOOK_COLUMNS = `id, name, url, events, sealed_secret AS "sealedSecret", status::text AS status, teams,
  created_at AS "createdAt", updated_at AS "updatedAt"`;

/** Newest first, one row more than the page so the caller learns whether more remain (as findPage). */
export async function findVisibleWebhooksNewestFirst(
  pool: pg.Pool,
  page: PageRequest,
  viewer: readonly string[],
): Promise<Webhook[]> {
  const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
  const keyset = after ? ` AND (created_at, id) < ($3, $4::uuid)` : "";
  const { rows } = await pool.query<Webhook>({
    name: `confined-webhooks-page${after ? "-after" : ""}`,
    text: `SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE ${webhookVisibleSql("$2")}${keyset}
            ORDER BY created_at DESC, id DESC LIMIT $1`,
    values: [page.limit + 1, viewer, ...(after ? [after.createdAt, after.id] : [])],
  });
  return rows;
}

export async function countVisibleWebhooks(pool: pg.Pool, viewer: readonly string[]): Promise<number> {
  const { rows } = await pool.query<{ n: number }>({
    name: "confined-webhooks-count",
    text: `SELECT count(*)::int AS n FROM webhooks WHERE ${webhookVisibleSql("$1")}`,
    values: [viewer],
  });
  return rows[0]!.n;
}
