import { z } from "zod";
import {
  createdWebhookViewSchema,
  toCreatedWebhookView,
  toUpdatedWebhookView,
  toWebhookView,
  updatedWebhookViewSchema,
  webhookViewSchema,
} from "../../domain/webhooks/webhook.view.ts";
import { createWebhookSchema, updateWebhookSchema } from "../../domain/webhooks/webhooks.schemas.ts";
import * as webhooks from "../../domain/webhooks/webhooks.service.ts";
import { readJsonBody } from "../json-body.ts";
import { pageQueryShape, pageRequestOf, sendPage } from "../list-response.ts";
import type { RouteDefinition } from "../route.ts";
import { READ_ONLY_FIELDS } from "../../domain/validation.ts";

const tag = "Webhooks";

export const webhookRoutes: RouteDefinition[] = [
  {
    operationId: "ListWebhooks",
    method: "GET",
    path: "/webhooks",
    summary: "List webhook subscriptions, newest first",
    description: "Webhook subscriptions whose teams are all the token's own, newest first; secrets are never shown.",
    tag,
    scope: "webhooks:read",
    query: z.object(pageQueryShape),
    success: {
      status: 200,
      description: "A page of subscriptions",
      schema: z.array(webhookViewSchema),
      headers: ["Link"],
    },
    errors: [400],
    async handle(ctx, svc) {
      const page = pageRequestOf(ctx);
      sendPage(ctx, await webhooks.listWebhooks(svc, page), page.limit, toWebhookView);
    },
  },
  {
    operationId: "CreateWebhook",
    method: "POST",
    path: "/webhooks",
    summary: "Subscribe an HTTPS endpoint to event types",
    description: "New subscriptions are active; the secret is never returned (always ********).",
    tag,
    scope: "webhooks:write",
    body: createWebhookSchema,
    bodyReadOnly: READ_ONLY_FIELDS,
    success: {
      status: 201,
      description: "The created subscription (no updatedAt)",
      schema: createdWebhookViewSchema,
      headers: ["Location"],
    },
    errors: [400, 413, 415],
    async handle(ctx, svc) {
      const webhook = await webhooks.createWebhook(svc, await readJsonBody(ctx));
      ctx.status = 201;
      ctx.set("Location", `/webhooks/${webhook.id}`);
      ctx.body = toCreatedWebhookView(webhook);
    },
  },
  {
    operationId: "GetWebhook",
    method: "GET",
    path: "/webhooks/{id}",
    summary: "Get a webhook subscription",
    description: "One webhook subscription; its secret is shown masked.",
    tag,
    scope: "webhooks:read",
    success: { status: 200, description: "The subscription", schema: webhookViewSchema },
    errors: [404],
    async handle(ctx, svc) {
      ctx.body = toWebhookView(await webhooks.getWebhook(svc, ctx.params.id!));
    },
  },
  {
    operationId: "UpdateWebhook",
    method: "PUT",
    path: "/webhooks/{id}",
    summary: "Update a webhook subscription (supplied fields overwrite, omitted ones are kept)",
    description:
      "A secret omitted or sent back as ******** keeps the stored one. status may be set to active or disabled; " +
      "disabling cancels the subscription's pending deliveries.",
    tag,
    scope: "webhooks:write",
    body: updateWebhookSchema,
    bodyReadOnly: READ_ONLY_FIELDS,
    success: { status: 200, description: "The updated subscription (no createdAt)", schema: updatedWebhookViewSchema },
    errors: [400, 404, 413, 415],
    async handle(ctx, svc) {
      ctx.body = toUpdatedWebhookView(await webhooks.updateWebhook(svc, ctx.params.id!, await readJsonBody(ctx)));
    },
  },
  {
    operationId: "DeleteWebhook",
    method: "DELETE",
    path: "/webhooks/{id}",
    summary: "Delete a webhook subscription; its pending deliveries go with it",
    description: "Deletes the subscription; its deliveries not yet sent are dropped with it. 204.",
    tag,
    scope: "webhooks:write",
    success: { status: 204, description: "Deleted" },
    errors: [404],
    async handle(ctx, svc) {
      await webhooks.deleteWebhook(svc, ctx.params.id!);
      ctx.status = 204;
    },
  },
];
