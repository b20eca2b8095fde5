import type { Db, Tx } from "../../db/client.ts";
import { notFound } from "../../errors.ts";
import type { Webhook } from "../../generated/prisma/client.ts";
import { isId } from "../../ids.ts";
import type { ViewerTeams } from "../access/viewer.ts";
import { webhookVisibleTo } from "./webhook-teams.ts";

/** The subscription, or 404 for an unknown or malformed id or one `viewer` does not reach. */
export async function requireWebhook(db: Db | Tx, id: string, viewer: ViewerTeams): Promise<Webhook> {
  const webhook = isId(id) ? await db.webhook.findUnique({ where: { id } }) : null;
  if (!webhook || !webhookVisibleTo(webhook.teams, viewer)) throw notFound("Webhook");
  return webhook;
}

/**
 * Its status and teams, the row locked until the transaction ends: it can be neither deleted nor
 * changed meanwhile, and the redeliveries and recoveries of one subscription take turns (each sees
 * what the one before queued). Deliveries can still be inserted (their key share does not wait).
 * 404 as requireWebhook.
 */
export async function lockWebhook(tx: Tx, id: string, viewer: ViewerTeams): Promise<Pick<Webhook, "status" | "teams">> {
  const [row] = isId(id)
    ? await tx.$queryRaw<
        Pick<Webhook, "status" | "teams">[]
      >`SELECT status::text AS status, teams FROM webhooks WHERE id = ${id}::uuid FOR NO KEY UPDATE`
    : [];
  if (!row || !webhookVisibleTo(row.teams, viewer)) throw notFound("Webhook");
  return row;
}
