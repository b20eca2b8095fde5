import type { Db, Tx } from "../../db/client.ts";
import { notFound } from "../../errors.ts";
import type { Webhook } from "../../generated/prisma/client.ts";
import { isId } from "../../ids.ts";

/** The subscription, or 404 for an unknown or malformed id. */
export async function requireWebhook(db: Db | Tx, id: string): Promise<Webhook> {
  const webhook = isId(id) ? await db.webhook.findUnique({ where: { id } }) : null;
  if (!webhook) throw notFound("Webhook");
  return webhook;
}

/** Its status, the row share-locked until the transaction ends: it can be neither deleted nor changed meanwhile. */
export async function lockWebhook(tx: Tx, id: string): Promise<Webhook["status"]> {
  const [row] = isId(id)
    ? await tx.$queryRaw<
        { status: Webhook["status"] }[]
      >`SELECT status::text AS status FROM webhooks WHERE id = ${id}::uuid FOR SHARE`
    : [];
  if (!row) throw notFound("Webhook");
  return row.status;
}
