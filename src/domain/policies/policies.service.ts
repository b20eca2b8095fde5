import { requireScope, type Actor } from "../../auth/scopes.ts";
import { visibleApplicationsWhere } from "../access/viewer.ts";
import { requireChangeable, requireTeamConditions, visiblePoliciesWhere } from "./policy-access.ts";
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
      return tx.policy.create({
        data: {
          id: newId(),
          name: input.name,
          action: input.action,
          ...conditionColumns(input.conditions),
          createdAt: now,
          updatedAt: now,
        },
      });
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
      await requireVisibleChangeable(tx, actor, id);
      const [updated] = await tx.policy.updateManyAndReturn({
        where: { id },
        data: { ...updateData(input), updatedAt: new Date() },
      });
      if (!updated) throw notFound("Policy");
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
    await requireVisibleChangeable(tx, actor, id);
    const { count } = await tx.policy.deleteMany({ where: { id } });
    if (count === 0) throw notFound("Policy");
  });
}

/** The policy, locked, when `actor` may change it (for an org-wide caller, no read: the write says 404). */
async function requireVisibleChangeable(tx: Tx, actor: Actor, id: string): Promise<void> {
  const visible = await visiblePoliciesWhere(tx, actor);
  if (visible.id === undefined) return;
  const [policy] = await tx.$queryRaw<Policy[]>`
    SELECT id, all_applications AS "allApplications", application_ids::text[] AS "applicationIds"
      FROM policies WHERE id = ${id}::uuid AND id = ANY(${visible.id.in}::uuid[]) FOR UPDATE`;
  requireChangeable(actor, policy ?? null);
}
