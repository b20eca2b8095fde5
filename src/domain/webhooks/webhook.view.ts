// The Webhook subscription as callers see it: the secret is always masked. docs/spec/SPEC.md §4 shapes the
// write responses: the create response has no updatedAt, the update response no createdAt.
import { z } from "zod";
import type { Webhook } from "../../generated/prisma/client.ts";
import { EVENT_TYPES } from "../../events/catalog.ts";
import { teamsView } from "./webhook-teams.ts";
import { SECRET_MASK } from "./webhooks.schemas.ts";

const fields = {
  id: z.string(),
  name: z.string(),
  url: z.url(),
  events: z.array(z.enum(EVENT_TYPES)),
  secret: z.literal(SECRET_MASK).describe("Always masked"),
  status: z.enum(["active", "disabled", "error"]),
  teams: z
    .array(z.string())
    .nullable()
    .describe("The teams whose applications' events it receives, sorted; null: every application's (CONTRACT §17)"),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
};

export const webhookViewSchema = z.object(fields).meta({ id: "Webhook" });
export const createdWebhookViewSchema = z.object(fields).omit({ updatedAt: true }).meta({ id: "CreatedWebhook" });
export const updatedWebhookViewSchema = z.object(fields).omit({ createdAt: true }).meta({ id: "UpdatedWebhook" });

export type WebhookView = z.infer<typeof webhookViewSchema>;

export const toWebhookView = (w: Webhook): WebhookView => ({
  id: w.id,
  name: w.name,
  url: w.url,
  events: w.events as WebhookView["events"],
  secret: SECRET_MASK,
  status: w.status,
  teams: teamsView(w.teams),
  createdAt: w.createdAt.toISOString(),
  updatedAt: w.updatedAt.toISOString(),
});

export function toCreatedWebhookView(w: Webhook): Omit<WebhookView, "updatedAt"> {
  const { updatedAt: _, ...view } = toWebhookView(w);
  return view;
}

export function toUpdatedWebhookView(w: Webhook): Omit<WebhookView, "createdAt"> {
  const { createdAt: _, ...view } = toWebhookView(w);
  return view;
}
