// The delivery log of a subscription, redelivery of an event to it, and recovery of what failed.
import { z } from "zod";
import { requireScope } from "../../auth/scopes.ts";
import { isForeignKeyViolation, type Db } from "../../db/client.ts";
import { conflict, DomainError, notFound } from "../../errors.ts";
import { notifyDeliveryQueued } from "../../events/delivery-wakeup.ts";
import { isId, newId } from "../../ids.ts";
import { viewerTeams } from "../access/viewer.ts";
import type { ServiceContext } from "../context.ts";
import { findPage, type Page, type PageRequest } from "../pagination.ts";
import { bodyObject, parseInput } from "../validation.ts";
import type { DeliveryWithLog } from "./delivery.view.ts";
import { lockWebhook, requireWebhook } from "./require-webhook.ts";

const withLog = { event: { select: { type: true } }, attempts: { orderBy: { attemptedAt: "asc" as const } } };

/**
 * Marks the deliveries not yet attempted that wait behind their subscription's pending retries: while
 * its endpoint fails, the dispatcher sends a subscription its due retries and no fresh delivery (see
 * docs/users/webhooks.md on holding), so these stay pending, due, with no attempt, until the endpoint recovers.
 */
async function markWaiting(db: Pick<Db, "$queryRaw">, webhookId: string, deliveries: DeliveryWithLog[]): Promise<void> {
  const fresh = deliveries.filter((d) => d.status === "pending" && d.attemptCount === 0);
  for (const d of deliveries) d.waiting = null;
  if (fresh.length === 0) return;
  // Literal conditions, so that the partial index of pending retries answers it.
  const [{ retrying }] = await db.$queryRaw<[{ retrying: boolean }]>`
    SELECT EXISTS (SELECT 1 FROM webhook_deliveries WHERE webhook_id = ${webhookId}::uuid AND status = 'pending' AND attempt_count > 0) AS retrying`;
  if (retrying) for (const d of fresh) d.waiting = "endpoint_recovery";
}

/** Deliveries of one subscription, newest first, each with its attempts. */
export async function listDeliveries(
  ctx: ServiceContext,
  webhookId: string,
  page: PageRequest,
): Promise<Page<DeliveryWithLog>> {
  const actor = requireScope(ctx.actor, "webhooks:read");
  await requireWebhook(ctx.db, webhookId, viewerTeams(actor));
  const found = await findPage(page, (args) =>
    ctx.db.webhookDelivery.findMany({ ...args, where: { AND: [{ webhookId }, args.where] }, include: withLog }),
  );
  await markWaiting(ctx.db, webhookId, found.items);
  return found;
}

export async function getDelivery(
  ctx: ServiceContext,
  webhookId: string,
  deliveryId: string,
): Promise<DeliveryWithLog> {
  const viewer = viewerTeams(requireScope(ctx.actor, "webhooks:read"));
  if (viewer !== null && isId(webhookId))
    await requireWebhook(ctx.db, webhookId, viewer).catch((err: unknown) => {
      throw err instanceof DomainError && err.kind === "not_found" ? notFound("Webhook delivery") : err;
    });
  const delivery =
    isId(webhookId) && isId(deliveryId)
      ? await ctx.db.webhookDelivery.findFirst({ where: { id: deliveryId, webhookId }, include: withLog })
      : null;
  if (!delivery) throw notFound("Webhook delivery");
  await markWaiting(ctx.db, webhookId, [delivery]);
  return delivery;
}

/**
 * Queues a new delivery (new id, so a new X-Webhook-Id) of the same event to the same subscription.
 * The subscription is share-locked so that it cannot be deleted or disabled before the commit.
 */
export async function redeliver(ctx: ServiceContext, webhookId: string, deliveryId: string): Promise<DeliveryWithLog> {
  const viewer = viewerTeams(requireScope(ctx.actor, "webhooks:write"));
  if (!isId(webhookId) || !isId(deliveryId)) throw notFound("Webhook delivery");
  return ctx.db.$transaction(async (tx) => {
    const webhook = await lockWebhook(tx, webhookId, viewer);
    if (webhook.status === "disabled") {
      throw conflict("The webhook is disabled and receives nothing; enable it before redelivering");
    }
    // Whether the subscription's teams (as they are now) still see the event: what it is sent again
    // must be what it would receive today.
    const [original] = await tx.$queryRaw<{ eventId: string; visible: boolean; pending: string | null }[]>`
      SELECT d.event_id::text AS "eventId", visible_to(e.teams, e.teams_all, NULLIF(${webhook.teams}::text[], '{}')) AS visible,
             (SELECT p.id::text FROM webhook_deliveries p
               WHERE p.webhook_id = d.webhook_id AND p.event_id = d.event_id AND p.status = 'pending' LIMIT 1) AS pending
        FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
       WHERE d.id = ${deliveryId}::uuid AND d.webhook_id = ${webhookId}::uuid`;
    if (!original) throw notFound("Webhook delivery");
    // Still to be sent (this one or an earlier copy): another copy would send the event twice more.
    if (original.pending)
      throw conflict(`The event is still to be sent by delivery ${original.pending}; nothing was queued`);
    if (!original.visible)
      throw conflict("The subscription's teams do not see this delivery's event; it is not sent again");
    const now = new Date();
    const created = await tx.webhookDelivery
      .create({
        data: { id: newId(), webhookId, eventId: original.eventId, nextAttemptAt: now, createdAt: now, updatedAt: now },
        include: withLog,
      })
      .catch((err: unknown) => {
        // Its event was deleted meanwhile by retention (the original delivery with it).
        throw isForeignKeyViolation(err) ? notFound("Webhook delivery") : err;
      });
    await notifyDeliveryQueued(tx, created.id);
    await markWaiting(tx, webhookId, [created]);
    return created;
  });
}

export const recoverSchema = z.strictObject({
  since: z.iso.datetime({ offset: true }).describe("Recover the events that happened at or after this time"),
});

/**
 * Sends again, as new deliveries (new ids, signed anew), the events since `since` whose delivery to
 * this subscription was given up (`failed`) or refused (`dropped`) and that it has not received or
 * been queued since (so recovering twice sends nothing twice). Returns how many were queued. The
 * subscription is share-locked so that it is neither deleted nor disabled before the commit, and the
 * events are key-share-locked so that retention cannot delete them meanwhile (it skips them). Only
 * the events its teams see now are sent again.
 */
export async function recoverDeliveries(ctx: ServiceContext, webhookId: string, body: unknown): Promise<number> {
  const viewer = viewerTeams(requireScope(ctx.actor, "webhooks:write"));
  if (!isId(webhookId)) throw notFound("Webhook");
  const { since } = parseInput(recoverSchema, bodyObject(body, []));
  return ctx.db.$transaction(async (tx) => {
    const webhook = await lockWebhook(tx, webhookId, viewer);
    if (webhook.status === "disabled") {
      throw conflict("The webhook is disabled and receives nothing; enable it before recovering its deliveries");
    }
    // A delivery is created when its event is fanned out, after the event happened: the subscription's
    // deliveries since `since` hold every event since then.
    const queued = await tx.$executeRaw`
      INSERT INTO webhook_deliveries (id, webhook_id, event_id, status, next_attempt_at, created_at, updated_at)
      SELECT uuid_v7(), ${webhookId}::uuid, e.id, 'pending', now(), now(), now()
        FROM events e
       WHERE e.id IN (SELECT d.event_id FROM webhook_deliveries d
                       WHERE d.webhook_id = ${webhookId}::uuid AND d.created_at >= ${since}::timestamptz AND d.status IN ('failed', 'dropped'))
         AND e.occurred_at >= ${since}::timestamptz
         AND visible_to(e.teams, e.teams_all, NULLIF(${webhook.teams}::text[], '{}'))
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
                          WHERE d.event_id = e.id AND d.webhook_id = ${webhookId}::uuid AND d.status IN ('pending', 'delivered'))
       ORDER BY e.position
         FOR KEY SHARE OF e SKIP LOCKED`;
    if (queued > 0) await notifyDeliveryQueued(tx, webhookId);
    return queued;
  });
}
