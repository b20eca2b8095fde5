import { z } from "zod";
import { deliveryViewSchema, toDeliveryView } from "../../domain/webhooks/delivery.view.ts";
import * as deliveries from "../../domain/webhooks/deliveries.service.ts";
import { pageQueryShape, pageRequestOf, sendPage } from "../list-response.ts";
import type { RouteDefinition } from "../route.ts";

const tag = "Webhooks";

export const webhookDeliveryRoutes: RouteDefinition[] = [
  {
    operationId: "ListWebhookDeliveries",
    method: "GET",
    path: "/webhooks/{id}/deliveries",
    summary: "List a webhook's deliveries with their attempts, newest first",
    tag,
    scope: "webhooks:read",
    query: z.object(pageQueryShape),
    success: { status: 200, description: "A page of deliveries", schema: z.array(deliveryViewSchema), headers: ["Link"] },
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
    tag,
    scope: "webhooks:write",
    success: { status: 202, description: "The new, pending delivery", schema: deliveryViewSchema, headers: ["Location"] },
    errors: [404, 409],
    async handle(ctx, svc) {
      const created = await deliveries.redeliver(svc, ctx.params.id!, ctx.params.deliveryId!);
      ctx.status = 202;
      ctx.set("Location", `/webhooks/${created.webhookId}/deliveries/${created.id}`);
      ctx.body = toDeliveryView(created);
    },
  },
];
