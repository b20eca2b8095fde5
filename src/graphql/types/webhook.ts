// Webhook: the type, its queries and its mutations, over the same service as REST. The secret
// never leaves the service: it reads as ******** here as everywhere.
import { teamsView } from "../../domain/webhooks/webhook-teams.ts";
import { SECRET_MASK } from "../../domain/webhooks/webhooks.schemas.ts";
import * as webhooks from "../../domain/webhooks/webhooks.service.ts";
import type { EventType } from "../../events/catalog.ts";
import { builder } from "../builder.ts";
import { countedConnection } from "../connection.ts";
import { pageRequestOf, toConnection } from "../connection-shape.ts";
import { restShaped } from "../inputs.ts";
import { EventTypeEnum, WebhookStatusEnum } from "./enums.ts";

const TEAMS_DESCRIPTION =
  "The teams whose applications' events it receives, sorted; null: every application's (org-wide tokens only). " +
  "A confined token names some of its own teams (all of them when omitted on create) and reaches only subscriptions all of whose teams are its own.";

export const WebhookRef = builder.prismaObject("Webhook", {
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    url: t.exposeString("url"),
    events: t.field({ type: [EventTypeEnum], resolve: (w) => w.events as EventType[] }),
    secret: t.string({ description: `Always ${SECRET_MASK}`, resolve: () => SECRET_MASK }),
    status: t.expose("status", { type: WebhookStatusEnum }),
    teams: t.stringList({
      nullable: true,
      description: TEAMS_DESCRIPTION,
      resolve: (w) => teamsView(w.teams),
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

const WebhookConnection = countedConnection(WebhookRef, "Webhook");

const CreateWebhookInput = builder.inputType("CreateWebhookInput", {
  fields: (t) => ({
    name: t.string({ required: true }),
    url: t.string({ required: true, description: "https:// only" }),
    events: t.field({ type: [EventTypeEnum], required: true }),
    secret: t.string({ required: true }),
    teams: t.stringList({ required: false, description: TEAMS_DESCRIPTION }),
  }),
});

const UpdateWebhookInput = builder.inputType("UpdateWebhookInput", {
  description: `Supplied fields overwrite, omitted ones are kept; a secret omitted or sent as ${SECRET_MASK} is kept.`,
  fields: (t) => ({
    name: t.string({ required: false }),
    url: t.string({ required: false }),
    events: t.field({ type: [EventTypeEnum], required: false }),
    secret: t.string({ required: false }),
    status: t.field({ type: WebhookStatusEnum, required: false }),
    teams: t.stringList({ required: false, description: TEAMS_DESCRIPTION }),
  }),
});

builder.queryFields((t) => ({
  webhooks: t.field({
    type: WebhookConnection,
    args: { first: t.arg.int(), after: t.arg.string() },
    resolve: async (_root, args, ctx) => {
      const page = pageRequestOf(args);
      const result = await webhooks.listWebhooks(ctx.service, page);
      return toConnection(result, page.cursor, () => webhooks.countWebhooks(ctx.service));
    },
  }),
  webhook: t.prismaField({
    type: "Webhook",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_query, _root, args, ctx) => webhooks.getWebhook(ctx.service, String(args.id)),
  }),
}));

builder.mutationFields((t) => ({
  createWebhook: t.prismaField({
    type: "Webhook",
    args: { input: t.arg({ type: CreateWebhookInput, required: true }) },
    resolve: (_query, _root, args, ctx) => webhooks.createWebhook(ctx.service, restShaped(args.input)),
  }),
  updateWebhook: t.prismaField({
    type: "Webhook",
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateWebhookInput, required: true }) },
    resolve: (_query, _root, args, ctx) => webhooks.updateWebhook(ctx.service, String(args.id), restShaped(args.input)),
  }),
  deleteWebhook: t.id({
    description:
      "Deletes the subscription together with its deliveries and their log (pending ones are never sent); returns its id.",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      await webhooks.deleteWebhook(ctx.service, String(args.id));
      return String(args.id);
    },
  }),
}));
