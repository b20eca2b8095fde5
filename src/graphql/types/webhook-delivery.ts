// WebhookDelivery: a subscription's delivery log (Webhook.deliveries), redelivery and recovery, over
// the same service as REST's /webhooks/{id}/deliveries and /webhooks/{id}/recover.
import * as deliveries from "../../domain/webhooks/deliveries.service.ts";
import type { DeliveryWithLog } from "../../domain/webhooks/delivery.view.ts";
import type { EventType } from "../../events/catalog.ts";
import type { DeliveryAttempt } from "../../generated/prisma/client.ts";
import { builder } from "../builder.ts";
import { plainConnection } from "../connection.ts";
import { pageRequestOf, toPlainConnection } from "../connection-shape.ts";
import { DeliveryStatusEnum, EventTypeEnum } from "./enums.ts";

const DeliveryAttemptRef = builder.objectRef<DeliveryAttempt>("WebhookDeliveryAttempt").implement({
  fields: (t) => ({
    attemptedAt: t.field({ type: "DateTime", resolve: (a) => a.attemptedAt }),
    statusCode: t.exposeInt("statusCode", {
      nullable: true,
      description: "The receiver's HTTP status; null when it gave no answer",
    }),
    durationMs: t.exposeInt("durationMs"),
    error: t.exposeString("error", {
      nullable: true,
      description: "timeout, connection or forbidden_target, with details; null when answered",
    }),
  }),
});

const DeliveryWaitingEnum = builder.enumType("DeliveryWaiting", {
  values: {
    ENDPOINT_RECOVERY: {
      value: "endpoint_recovery",
      description: "Not yet attempted: held back while the subscription's endpoint fails and its retries are pending",
    },
  } as const,
});

const WebhookRecoveryRef = builder.objectRef<{ deliveries: number }>("WebhookRecovery").implement({
  fields: (t) => ({ deliveries: t.exposeInt("deliveries", { description: "New pending deliveries" }) }),
});

export const WebhookDeliveryRef = builder.objectRef<DeliveryWithLog>("WebhookDelivery").implement({
  fields: (t) => ({
    id: t.exposeID("id", { description: "The delivery id, sent as X-Webhook-Id on every attempt" }),
    eventId: t.exposeID("eventId"),
    eventType: t.field({ type: EventTypeEnum, resolve: (d) => d.event.type as EventType }),
    status: t.field({ type: DeliveryStatusEnum, resolve: (d) => d.status }),
    createdAt: t.field({ type: "DateTime", resolve: (d) => d.createdAt }),
    nextAttemptAt: t.field({ type: "DateTime", nullable: true, resolve: (d) => d.nextAttemptAt }),
    waiting: t.field({ type: DeliveryWaitingEnum, nullable: true, resolve: (d) => d.waiting ?? null }),
    attempts: t.field({ type: [DeliveryAttemptRef], description: "Oldest first", resolve: (d) => d.attempts }),
  }),
});

const WebhookDeliveryConnection = plainConnection(WebhookDeliveryRef, "WebhookDelivery");

builder.prismaObjectFields("Webhook", (t) => ({
  deliveries: t.field({
    type: WebhookDeliveryConnection,
    description: "The subscription's deliveries with their attempts, newest first.",
    args: { first: t.arg.int(), after: t.arg.string() },
    resolve: async (webhook, args, ctx) => {
      const page = pageRequestOf(args);
      return toPlainConnection(await deliveries.listDeliveries(ctx.service, webhook.id, page), page.cursor);
    },
  }),
}));

builder.mutationFields((t) => ({
  redeliverWebhookDelivery: t.field({
    type: WebhookDeliveryRef,
    description: "Sends a delivery's event again, as a new pending delivery (a new id) to the same subscription.",
    args: { webhookId: t.arg.id({ required: true }), deliveryId: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => deliveries.redeliver(ctx.service, String(args.webhookId), String(args.deliveryId)),
  }),
  recoverWebhookDeliveries: t.field({
    type: WebhookRecoveryRef,
    description:
      "Sends again, as new deliveries, the events since `since` whose delivery to the subscription failed or was dropped " +
      "(and that it has not received or been queued since).",
    args: { webhookId: t.arg.id({ required: true }), since: t.arg({ type: "DateTime", required: true }) },
    resolve: async (_root, args, ctx) => ({
      deliveries: await deliveries.recoverDeliveries(ctx.service, String(args.webhookId), {
        since: args.since.toISOString(),
      }),
    }),
  }),
}));
