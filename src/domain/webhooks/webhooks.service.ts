import { requireScope, type Actor } from "../../auth/scopes.ts";
import { EVENT_READ_SCOPE, type EventType } from "../../events/catalog.ts";
import { invalid, notFound } from "../../errors.ts";
import { Prisma, type Webhook } from "../../generated/prisma/client.ts";
import { isId, newId } from "../../ids.ts";
import { viewerTeams } from "../access/viewer.ts";
import type { ServiceContext } from "../context.ts";
import { findPage, toPage, type Page, type PageRequest } from "../pagination.ts";
import { bodyObject, parseInput } from "../validation.ts";
import { PENDING_DELIVERY } from "./pending-deliveries.ts";
import { requireWebhook } from "./require-webhook.ts";
import { toCreatedWebhookView, toUpdatedWebhookView } from "./webhook.view.ts";
import { recordCreated, recordDeleted, recordUpdated } from "../audit/configuration-events.ts";
import { countVisibleWebhooks, findVisibleWebhooksNewestFirst } from "./webhook-reads.ts";
import { teamsToStore, webhookVisibleSql, webhookVisibleTo } from "./webhook-teams.ts";
import {
  CREATE_READ_ONLY_FIELDS,
  SECRET_MASK,
  UPDATE_READ_ONLY_FIELDS,
  webhookSchemas,
  type UpdateWebhookInput,
} from "./webhooks.schemas.ts";

/**
 * A subscription carries event data out of the service, so it needs the read scope of every event
 * type it asks for (docs/spec/CONTRACT.md §1): webhooks:write alone must not be a way to read vulnerabilities.
 */
function requireEventScopes(ctx: ServiceContext, events: readonly string[] | undefined): void {
  for (const type of events ?? []) requireScope(ctx.actor, EVENT_READ_SCOPE[type as EventType]);
}

// A confined token (CONTRACT §17) reaches only the subscriptions all of whose teams are its own:
// others are absent from its lists and counts, and 404 by id.

export async function listWebhooks(ctx: ServiceContext, page: PageRequest): Promise<Page<Webhook>> {
  const viewer = viewerTeams(requireScope(ctx.actor, "webhooks:read"));
  if (viewer !== null) return toPage(await findVisibleWebhooksNewestFirst(ctx.pool, page, viewer), page.limit);
  return findPage(page, (args) => ctx.db.webhook.findMany(args));
}

/** How many webhook subscriptions the caller reaches (GraphQL's totalCount). */
export async function countWebhooks(ctx: ServiceContext): Promise<number> {
  const viewer = viewerTeams(requireScope(ctx.actor, "webhooks:read"));
  return viewer === null ? ctx.db.webhook.count() : countVisibleWebhooks(ctx.pool, viewer);
}

export async function getWebhook(ctx: ServiceContext, id: string): Promise<Webhook> {
  const actor = requireScope(ctx.actor, "webhooks:read");
  return requireWebhook(ctx.db, id, viewerTeams(actor));
}

export async function createWebhook(ctx: ServiceContext, body: unknown): Promise<Webhook> {
  const actor = requireScope(ctx.actor, "webhooks:write");
  const input = parseInput(webhookSchemas(ctx.settings).create, bodyObject(body, CREATE_READ_ONLY_FIELDS));
  requireEventScopes(ctx, input.events);
  const { secret, teams, ...fields } = input;
  const id = newId();
  const now = new Date();
  return ctx.db.$transaction(async (tx) => {
    const webhook = await tx.webhook.create({
      data: {
        id,
        ...fields,
        teams: teamsToStore(actor, teams),
        sealedSecret: ctx.settings.webhookSecrets.seal(secret, id),
        status: "active",
        createdAt: now,
        updatedAt: now,
      },
    });
    await recordCreated(tx, "webhook", toCreatedWebhookView(webhook), actor, audit(webhook.teams));
    return webhook;
  });
}

/** A subscription's audit events go to the tokens it is visible to: its teams' (none: org-wide tokens only). */
const audit = (teams: readonly string[]) => ({
  audience: teams.length ? { teams, teamsAll: true } : { teams: null, teamsAll: false },
});

function updateData(
  ctx: ServiceContext,
  actor: Actor,
  id: string,
  input: UpdateWebhookInput,
): Prisma.WebhookUpdateManyMutationInput {
  return {
    ...(input.teams !== undefined && { teams: teamsToStore(actor, input.teams) }),
    ...(input.name !== undefined && { name: input.name }),
    ...(input.url !== undefined && { url: input.url }),
    ...(input.events !== undefined && { events: input.events }),
    ...(input.secret !== undefined &&
      input.secret !== SECRET_MASK && { sealedSecret: ctx.settings.webhookSecrets.seal(input.secret, id) }),
    ...(input.status !== undefined && { status: input.status }),
  };
}

/**
 * Merge update. Disabling a subscription cancels its pending deliveries in the same transaction,
 * so a disabled subscription receives nothing more.
 */
/** The secret `webhook` signs with now, or null when no configured key opens it. */
function secretOfWith(ctx: ServiceContext) {
  return (webhook: Webhook): string | null => {
    try {
      return ctx.settings.webhookSecrets.open(webhook.sealedSecret, webhook.id);
    } catch {
      return null;
    }
  };
}

export async function updateWebhook(ctx: ServiceContext, id: string, body: unknown): Promise<Webhook> {
  const actor = requireScope(ctx.actor, "webhooks:write");
  const input = parseInput(webhookSchemas(ctx.settings).update, bodyObject(body, UPDATE_READ_ONLY_FIELDS));
  if (!isId(id)) throw notFound("Webhook");
  const secretOf = secretOfWith(ctx);
  return ctx.db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT 1 FROM webhooks WHERE id = ${id}::uuid FOR UPDATE`;
    const current = await tx.webhook.findUnique({ where: { id } });
    if (!current || !webhookVisibleTo(current.teams, viewerTeams(actor))) throw notFound("Webhook");
    // Whatever changes (even only the url), the caller must be allowed to read what it will carry.
    requireEventScopes(ctx, input.events ?? current.events);
    if (input.status === "error" && current.status !== "error") {
      throw invalid("Request body is invalid", [
        { path: "status", message: "Only active or disabled can be set; error is assigned by the service" },
      ]);
    }
    const updated = await tx.webhook.update({
      where: { id },
      data: { ...updateData(ctx, actor, id, input), updatedAt: new Date() },
    });
    if (updated.status === "disabled") {
      await tx.$executeRaw`
        UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL, updated_at = now()
         WHERE webhook_id = ${id}::uuid AND ${Prisma.raw(PENDING_DELIVERY)}`;
    }
    // The view masks the secret, so a new one is named apart.
    const secretChanged =
      input.secret !== undefined && input.secret !== SECRET_MASK && secretOf(current) !== input.secret;
    const views = [toUpdatedWebhookView(current), toUpdatedWebhookView(updated)] as const;
    await recordUpdated(tx, "webhook", ...views, actor, audit(current.teams), secretChanged ? ["secret"] : []);
    return updated;
  });
}

/** Deletes the subscription; its deliveries and their attempts go with it. */
export async function deleteWebhook(ctx: ServiceContext, id: string): Promise<void> {
  const actor = requireScope(ctx.actor, "webhooks:write");
  const viewer = viewerTeams(actor);
  if (!isId(id)) throw notFound("Webhook");
  await ctx.db.$transaction(async (tx) => {
    const [deleted] = await tx.$queryRawUnsafe<Pick<Webhook, "id" | "name" | "teams">[]>(
      `DELETE FROM webhooks WHERE id = $1::uuid AND ($2::text[] IS NULL OR ${webhookVisibleSql("$2")})
       RETURNING id::text, name, teams`,
      id,
      viewer,
    );
    if (!deleted) throw notFound("Webhook");
    await recordDeleted(tx, "webhook", deleted, actor, audit(deleted.teams));
  });
}
