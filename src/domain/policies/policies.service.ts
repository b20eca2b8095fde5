import { requireScope, type Actor } from "../../auth/scopes.ts";
import { visibleApplicationsWhere } from "../access/viewer.ts";
import { recordCreated, recordDeleted, recordUpdated } from "../audit/configuration-events.ts";
import { policyAudience, requireChangeable, requireTeamConditions, visiblePoliciesWhere } from "./policy-access.ts";
import { toPolicyView } from "./policy.view.ts";
import { isUniqueViolation, type Tx } from "../../db/client.ts";
import { conflict, invalid, notFound, type FieldError } from "../../errors.ts";
import type { Policy, Prisma } from "../../generated/prisma/client.ts";
import { isId, newId } from "../../ids.ts";
import type { ServiceContext } from "../context.ts";
import { findPage, type Page, type PageRequest } from "../pagination.ts";
import { bodyObject, parseInput, READ_ONLY_FIELDS } from "../validation.ts";
import {
  createPolicySchema,
  updatePolicySchema,
  type PolicyConditionsInput,
  type UpdatePolicyInput,
} from "./policies.schemas.ts";

const duplicateName = (name: string) => conflict(`A policy named '${name}' already exists`);

/** The stored columns for a conditions object (absent or null: every application, any severity). */
function conditionColumns(conditions: PolicyConditionsInput | null | undefined) {
  const ids = conditions?.applicationIds;
  return {
    allApplications: ids == null,
    applicationIds: [...new Set(ids ?? [])],
    vulnerabilitySeverity: conditions?.vulnerabilitySeverity ?? null,
    slaBreached: conditions?.slaBreached ?? false,
  };
}

/**
 * Every named application must exist, and be one the caller sees (another team's is as unknown,
 * CONTRACT §17). The rows are share-locked until the transaction ends, so a concurrent application
 * delete waits for this write and then removes the id from the policy (see deleteApplication)
 * rather than leaving it dangling.
 */
async function requireApplications(
  tx: Tx,
  actor: Actor,
  conditions: PolicyConditionsInput | null | undefined,
): Promise<void> {
  const ids = conditions?.applicationIds;
  if (!ids?.length) return;
  const locked = await tx.$queryRaw<{ id: string; owner: string | null }[]>`
    SELECT id::text AS id, owner FROM applications WHERE id = ANY(${[...new Set(ids)]}::uuid[]) FOR SHARE`;
  const seen = visibleApplicationsWhere(actor).owner?.in;
  const found = new Set(locked.filter((a) => !seen || (a.owner !== null && seen.includes(a.owner))).map((a) => a.id));
  const errors: FieldError[] = ids.flatMap((id, i) =>
    found.has(id) ? [] : [{ path: `conditions.applicationIds[${i}]`, message: `No application with id '${id}'` }],
  );
  if (errors.length > 0) throw invalid("Policy conditions name unknown applications", errors);
}

export async function listPolicies(ctx: ServiceContext, page: PageRequest): Promise<Page<Policy>> {
  const actor = requireScope(ctx.actor, "policies:read");
  const visible = await visiblePoliciesWhere(ctx.db, actor);
  return findPage(page, (args) => ctx.db.policy.findMany({ ...args, where: { AND: [visible, args.where ?? {}] } }));
}

/** How many policies exist (GraphQL's totalCount). */
export async function countPolicies(ctx: ServiceContext): Promise<number> {
  const actor = requireScope(ctx.actor, "policies:read");
  return ctx.db.policy.count({ where: await visiblePoliciesWhere(ctx.db, actor) });
}

export async function getPolicy(ctx: ServiceContext, id: string): Promise<Policy> {
  const actor = requireScope(ctx.actor, "policies:read");
  const policy = isId(id)
    ? await ctx.db.policy.findFirst({ where: { AND: [{ id }, await visiblePoliciesWhere(ctx.db, actor)] } })
    : null;
  if (!policy) throw notFound("Policy");
  return policy;
}

export async function createPolicy(ctx: ServiceContext, body: unknown): Promise<Policy> {
  const actor = requireScope(ctx.actor, "policies:write");
  const input = parseInput(createPolicySchema, bodyObject(body, READ_ONLY_FIELDS));
  requireTeamConditions(actor, input.conditions?.applicationIds);
  const now = new Date();
  try {
    return await ctx.db.$transaction(async (tx) => {
      await requireApplications(tx, actor, input.conditions);
      const policy = await tx.policy.create({
        data: {
          id: newId(),
          name: input.name,
          action: input.action,
          ...conditionColumns(input.conditions),
          createdAt: now,
          updatedAt: now,
        },
      });
      await recordCreated(tx, "policy", toPolicyView(policy), actor, { audience: await policyAudience(tx, policy) });
      return policy;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicateName(input.name);
    throw err;
  }
}

function updateData(input: UpdatePolicyInput): Prisma.PolicyUpdateManyMutationInput {
  return {
    ...(input.name !== undefined && { name: input.name }),
    ...(input.action !== undefined && { action: input.action }),
    ...(input.conditions !== undefined && conditionColumns(input.conditions)),
  };
}

export async function updatePolicy(ctx: ServiceContext, id: string, body: unknown): Promise<Policy> {
  const actor = requireScope(ctx.actor, "policies:write");
  const input = parseInput(updatePolicySchema, bodyObject(body, READ_ONLY_FIELDS));
  if (input.conditions !== undefined) requireTeamConditions(actor, input.conditions?.applicationIds);
  if (!isId(id)) throw notFound("Policy");
  try {
    return await ctx.db.$transaction(async (tx) => {
      // Applications are locked before the policy row, the same order deleteApplication takes.
      await requireApplications(tx, actor, input.conditions);
      const before = await lockChangeable(tx, actor, id);
      const updated = await tx.policy.update({ where: { id }, data: { ...updateData(input), updatedAt: new Date() } });
      const audience = await policyAudience(tx, updated);
      await recordUpdated(tx, "policy", toPolicyView(before), toPolicyView(updated), actor, { audience });
      return updated;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicateName(input.name!);
    throw err;
  }
}

export async function deletePolicy(ctx: ServiceContext, id: string): Promise<void> {
  const actor = requireScope(ctx.actor, "policies:write");
  if (!isId(id)) throw notFound("Policy");
  await ctx.db.$transaction(async (tx) => {
    const policy = await lockChangeable(tx, actor, id);
    const audience = await policyAudience(tx, policy);
    await tx.policy.delete({ where: { id } });
    await recordDeleted(tx, "policy", policy, actor, { audience });
  });
}

/** The policy, locked until the transaction ends, when `actor` may change it (requireChangeable). */
async function lockChangeable(tx: Tx, actor: Actor, id: string): Promise<Policy> {
  await tx.$queryRaw`SELECT 1 FROM policies WHERE id = ${id}::uuid FOR UPDATE`;
  const policy = await tx.policy.findFirst({ where: { AND: [{ id }, await visiblePoliciesWhere(tx, actor)] } });
  return requireChangeable(actor, policy);
}

/**
 * Takes a deleted application out of the policies naming it (each change an event, by the one who
 * deleted it). Called in the delete's transaction, after the application's row is gone.
 */
export async function dropFromPolicies(tx: Tx, actor: Actor, applicationId: string): Promise<void> {
  const changed = await tx.policy.findMany({
    where: { applicationIds: { has: applicationId } },
    orderBy: { id: "asc" },
  });
  for (const before of changed) {
    const after = await tx.policy.update({
      where: { id: before.id },
      data: { applicationIds: before.applicationIds.filter((id) => id !== applicationId), updatedAt: new Date() },
    });
    const audience = await policyAudience(tx, after);
    await recordUpdated(tx, "policy", toPolicyView(before), toPolicyView(after), actor, { audience });
  }
}
