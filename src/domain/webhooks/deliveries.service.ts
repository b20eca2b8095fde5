// The delivery log of a subscription, and redelivery of an event to it.
import { requireScope } from "../../auth/scopes.ts";
import { conflict, notFound } from "../../errors.ts";
import { notifyDeliveryQueued } from "../../events/delivery-wakeup.ts";
import { isId, newId } from "../../ids.ts";
import type { ServiceContext } from "../context.ts";
import { findPage, type Page, type PageRequest } from "../pagination.ts";
import type { DeliveryWithLog } from "./delivery.view.ts";
import { lockWebhook, requireWebhook } from "./require-webhook.ts";

const withLog = { event: { select: { type: true } }, attempts: { orderBy: { attemptedAt: "asc" as const } } };

/** Deliveries of one subscription, newest first, each with its attempts. */
export async function listDeliveries(ctx: ServiceContext, webhookId: string, page: PageRequest): Promise<Page<DeliveryWithLog>> {
  requireScope(ctx.actor, "webhooks:read");
  await requireWebhook(ctx.db, webhookId);
  return findPage(page, (args) =>
    ctx.db.webhookDelivery.findMany({ ...args, where: { AND: [{ webhookId }, args.where] }, include: withLog }),
  );
}

export async function getDelivery(ctx: ServiceContext, webhookId: string, deliveryId: string): Promise<DeliveryWithLog> {
  requireScope(ctx.actor, "webhooks:read");
  const delivery =
    isId(webhookId) && isId(deliveryId)
      ? await ctx.db.webhookDelivery.findFirst({ where: { id: deliveryId, webhookId }, include: withLog })
      : null;
  if (!delivery) throw notFound("Webhook delivery");
  return delivery;
}

/**
 * Queues a new delivery (new id, so a new X-Webhook-Id) of the same event to the same subscription.
 * The subscription is share-locked so that it cannot be deleted or disabled before the commit.
 */
export async function redeliver(ctx: ServiceContext, webhookId: string, deliveryId: string): Promise<DeliveryWithLog> {
  requireScope(ctx.actor, "webhooks:write");
  if (!isId(webhookId) || !isId(deliveryId)) throw notFound("Webhook delivery");
  return ctx.db.$transaction(async (tx) => {
    if ((await lockWebhook(tx, webhookId)) === "disabled") {
      throw conflict("The webhook is disabled and receives nothing; enable it before redelivering");
    }
    const original = await tx.webhookDelivery.findFirst({ where: { id: deliveryId, webhookId }, select: { eventId: true } });
    if (!original) throw notFound("Webhook delivery");
    const now = new Date();
    const created = await tx.webhookDelivery.create({
      data: { id: newId(), webhookId, eventId: original.eventId, nextAttemptAt: now, createdAt: now, updatedAt: now },
      include: withLog,
    });
    await notifyDeliveryQueued(tx, created.id);
    return created;
  });
}
