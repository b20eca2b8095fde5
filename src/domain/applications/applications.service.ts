import { requireScope, type Actor } from "../../auth/scopes.ts";
import { recordCreated, recordDeleted, recordUpdated } from "../audit/configuration-events.ts";
import { dropFromPolicies } from "../policies/policies.service.ts";
import { toApplicationView } from "./application.view.ts";
import { ownerOnCreate, requireOwnerChangeAllowed } from "../access/owners.ts";
import { applicationAudience, visibleApplicationsWhere, viewerTeams } from "../access/viewer.ts";
import { isUniqueViolation, type Tx } from "../../db/client.ts";
import { conflict, notFound } from "../../errors.ts";
import { Prisma, type Application } from "../../generated/prisma/client.ts";
import { isId, newId } from "../../ids.ts";
import type { ServiceContext } from "../context.ts";
import { emptyPage, toPage, type Page, type PageRequest } from "../pagination.ts";
import {
  APPLICATION_COLUMNS,
  countMatchingApplications,
  findApplication,
  findApplicationsNewestFirst,
  type ApplicationMatch,
} from "./application-reads.ts";
import { bodyObject, hasNul, parseInput, READ_ONLY_FIELDS } from "../validation.ts";
import {
  CRITICALITIES,
  createApplicationSchema,
  updateApplicationSchema,
  type ApplicationFilter,
  type UpdateApplicationInput,
} from "./applications.schemas.ts";

const duplicateName = (name: string) => conflict(`An application named '${name}' already exists`);

/** A filter given several times must match each value (AND); different values match nothing. */
function single(values: string | string[] | undefined): { matchesNothing: boolean; value?: string } {
  const distinct = [...new Set([values ?? []].flat())];
  return { matchesNothing: distinct.length > 1, value: distinct[0] };
}

function applicationMatch(filter: ApplicationFilter, teams: readonly string[] | null): ApplicationMatch | null {
  const owner = single(filter.owner);
  const criticality = single(filter.criticality);
  if (owner.matchesNothing || criticality.matchesNothing) return null;
  // Any criticality string is accepted; one outside the enum simply matches nothing.
  if (criticality.value !== undefined && !(CRITICALITIES as readonly string[]).includes(criticality.value)) return null;
  if ([owner.value, ...(filter.tags ?? [])].some((v) => v !== undefined && hasNul(v))) return null;
  return {
    ...(teams !== null && { teams }),
    owner: owner.value,
    criticality: criticality.value,
    tags: filter.tags,
  };
}

export async function listApplications(
  ctx: ServiceContext,
  filter: ApplicationFilter,
  page: PageRequest,
): Promise<Page<Application>> {
  const actor = requireScope(ctx.actor, "applications:read");
  const match = applicationMatch(filter, viewerTeams(actor));
  if (!match) return emptyPage();
  return toPage(await findApplicationsNewestFirst(ctx.pool, page, match), page.limit);
}

/** How many applications match the filter (GraphQL's totalCount). */
export async function countApplications(ctx: ServiceContext, filter: ApplicationFilter): Promise<number> {
  const actor = requireScope(ctx.actor, "applications:read");
  const match = applicationMatch(filter, viewerTeams(actor));
  return match ? countMatchingApplications(ctx.pool, match) : 0;
}

/** Many applications by id in one statement (GraphQL fields that point at an application). */
export async function getApplicationsByIds(
  ctx: ServiceContext,
  ids: readonly string[],
): Promise<Map<string, Application>> {
  const actor = requireScope(ctx.actor, "applications:read");
  const rows = await ctx.db.application.findMany({
    where: { id: { in: ids.filter(isId) }, ...visibleApplicationsWhere(actor) },
  });
  return new Map(rows.map((a) => [a.id, a]));
}

export async function getApplication(ctx: ServiceContext, id: string): Promise<Application> {
  const actor = requireScope(ctx.actor, "applications:read");
  const app = isId(id) ? await findApplication(ctx.pool, id, viewerTeams(actor)) : null;
  if (!app) throw notFound("Application");
  return app;
}

export async function createApplication(ctx: ServiceContext, body: unknown): Promise<Application> {
  const actor = requireScope(ctx.actor, "applications:write");
  const input = parseInput(createApplicationSchema, bodyObject(body, READ_ONLY_FIELDS));
  const owner = ownerOnCreate(actor, input.owner);
  const now = new Date();
  try {
    return await ctx.db.$transaction(async (tx) => {
      const app = await tx.application.create({
        data: {
          id: newId(),
          name: input.name,
          description: input.description ?? null,
          criticality: input.criticality ?? "medium",
          owner,
          repoUrl: input.repoUrl ?? null,
          serviceUrl: input.serviceUrl ?? null,
          language: input.language ?? null,
          tags: input.tags ?? [],
          createdAt: now,
          updatedAt: now,
        },
      });
      await recordCreated(tx, "application", toApplicationView(app), actor, audit(app.id, app.owner));
      return app;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicateName(input.name);
    throw err;
  }
}

/** An application's audit events go to its owner's team (on a move, the old one's and the new one's). */
const audit = (id: string, ...owners: (string | null)[]) => ({
  applicationId: id,
  audience: applicationAudience(...owners),
});

function updateData(input: UpdateApplicationInput): Prisma.ApplicationUpdateInput {
  const data: Prisma.ApplicationUpdateInput = {};
  if (input.name !== undefined) data.name = input.name;
  if (input.description !== undefined) data.description = input.description;
  if (input.criticality !== undefined) data.criticality = input.criticality ?? "medium";
  if (input.owner !== undefined) data.owner = input.owner;
  if (input.repoUrl !== undefined) data.repoUrl = input.repoUrl;
  if (input.serviceUrl !== undefined) data.serviceUrl = input.serviceUrl;
  if (input.language !== undefined) data.language = input.language;
  if (input.tags !== undefined) data.tags = input.tags ?? [];
  return data;
}

export async function updateApplication(ctx: ServiceContext, id: string, body: unknown): Promise<Application> {
  const actor = requireScope(ctx.actor, "applications:write");
  const input = parseInput(updateApplicationSchema, bodyObject(body, READ_ONLY_FIELDS));
  if (input.owner !== undefined) requireOwnerChangeAllowed(actor, input.owner);
  if (!isId(id)) throw notFound("Application");
  try {
    return await ctx.db.$transaction(async (tx) => {
      const before = await lockVisible(tx, actor, id);
      const updated = await tx.application.update({
        where: { id },
        data: { ...updateData(input), updatedAt: new Date() },
      });
      const views = [toApplicationView(before), toApplicationView(updated)] as const;
      await recordUpdated(tx, "application", ...views, actor, audit(id, before.owner, updated.owner));
      return updated;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicateName(input.name!);
    throw err;
  }
}

/** The application, locked until the transaction ends, when `actor` sees it; else 404. */
async function lockVisible(tx: Tx, actor: Actor, id: string): Promise<Application> {
  const teams = viewerTeams(actor);
  const [app] = await tx.$queryRaw<Application[]>`
    SELECT ${Prisma.raw(APPLICATION_COLUMNS)} FROM applications
     WHERE id = ${id}::uuid AND (${teams}::text[] IS NULL OR owner = ANY(${teams}::text[])) FOR UPDATE`;
  if (!app) throw notFound("Application");
  return app;
}

/** Deletes the application with its scans and vulnerabilities, and drops it from policy targets. */
export async function deleteApplication(ctx: ServiceContext, id: string): Promise<void> {
  const actor = requireScope(ctx.actor, "applications:write");
  if (!isId(id)) throw notFound("Application");
  await ctx.db.$transaction(async (tx) => {
    // Lock order: scans before their application, as a completing scan does (it holds its scan row
    // and then needs the application for its vulnerabilities); the other order deadlocks.
    await tx.$queryRaw`SELECT id FROM scans WHERE application_id = ${id}::uuid ORDER BY id FOR UPDATE`;
    const app = await lockVisible(tx, actor, id);
    await tx.application.delete({ where: { id } });
    await recordDeleted(tx, "application", app, actor, audit(id, app.owner));
    await dropFromPolicies(tx, actor, id);
  });
}
