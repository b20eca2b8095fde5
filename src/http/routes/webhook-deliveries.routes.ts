import { z } from "zod";
import { deliveryViewSchema, toDeliveryView } from "../../domain/webhooks/delivery.view.ts";
import * as deliveries from "../../domain/webhooks/deliveries.service.ts";
import { recoverSchema } from "../../domain/webhooks/deliveries.service.ts";
import { readJsonBody } from "../json-body.ts";
import { pageQueryShape, pageRequestOf, sendPage } from "../list-response.ts";
import type { RouteDefinition } from "../route.ts";

const tag = "Webhooks";

export const webhookDeliveryRoutes: RouteDefinition[] = [
  {
    operationId: "ListWebhookDeliveries",
    method: "GET",
    path: "/webhooks/{id}/deliveries",
    summary: "List a webhook's deliveries with their attempts, newest first",
    description:
      "The subscription's deliveries, newest first, each with its attempts (status code, duration, error), in pages of `limit`.",
    tag,
    scope: "webhooks:read",
    query: z.object(pageQueryShape),
    success: {
      status: 200,
      description: "A page of deliveries",
      schema: z.array(deliveryViewSchema),
      headers: ["Link"],
    },
    errors: [400, 404],
    async handle(ctx, svc) {
      const page = pageRequestOf(ctx);
      sendPage(ctx, await deliveries.listDeliveries(svc, ctx.params.id!, page), page.limit, toDeliveryView);
    },
  },
  {
    operationId: "GetWebhookDelivery",
    method: "GET",
    path: "/webhooks/{id}/deliveries/{deliveryId}",
    summary: "Get one delivery with its attempts",
    description: "One delivery with every attempt made and when the next one is due.",
    tag,
    scope: "webhooks:read",
    success: { status: 200, description: "The delivery", schema: deliveryViewSchema },
    errors: [404],
    async handle(ctx, svc) {
      ctx.body = toDeliveryView(await deliveries.getDelivery(svc, ctx.params.id!, ctx.params.deliveryId!));
    },
  },
  {
    operationId: "RedeliverWebhookDelivery",
    method: "POST",
    path: "/webhooks/{id}/deliveries/{deliveryId}/redeliver",
    summary: "Send a delivery's event again, as a new delivery",
    description:
      "Queues the delivery's event again as a new delivery (202). 409 while a copy of that event is still pending for the subscription.",
    tag,
    scope: "webhooks:write",
    success: {
      status: 202,
      description: "The new, pending delivery",
      schema: deliveryViewSchema,
      headers: ["Location"],
    },
    errors: [404, 409],
    async handle(ctx, svc) {
      const created = await deliveries.redeliver(svc, ctx.params.id!, ctx.params.deliveryId!);
      ctx.status = 202;
      ctx.set("Location", `/webhooks/${created.webhookId}/deliveries/${created.id}`);
      ctx.body = toDeliveryView(created);
    },
  },
  {
    operationId: "RecoverWebhookDeliveries",
    method: "POST",
    path: "/webhooks/{id}/recover",
    summary: "Send again the events since a time whose delivery failed or was dropped",
    description:
      "Queues a new delivery (new id, signed anew) of every event since `since` whose delivery to this subscription was " +
      "given up (failed) or refused (dropped), and that it has not received or been queued again since. 409 for a disabled subscription.",
    tag,
    scope: "webhooks:write",
    body: recoverSchema,
    success: {
      status: 202,
      description: "How many deliveries were queued",
      schema: z.object({ deliveries: z.int().describe("New pending deliveries") }),
    },
    errors: [404, 409, 413, 415],
    async handle(ctx, svc) {
      const queued = await deliveries.recoverDeliveries(svc, ctx.params.id!, await readJsonBody(ctx));
      ctx.status = 202;
      ctx.body = { deliveries: queued };
    },
  },
];
