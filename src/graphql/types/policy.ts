// Policy: the type, its queries and its mutations, over the same service as REST.
import * as policies from "../../domain/policies/policies.service.ts";
import { builder } from "../builder.ts";
import { countedConnection } from "../connection.ts";
import { pageRequestOf, toConnection } from "../connection-shape.ts";
import { restShaped } from "../inputs.ts";
import { PolicyActionEnum, SeverityEnum } from "./enums.ts";

const PolicyConditions = builder
  .objectRef<{ applicationIds: string[] | null; vulnerabilitySeverity: string | null; slaBreached?: true }>(
    "PolicyConditions",
  )
  .implement({
    fields: (t) => ({
      applicationIds: t.exposeIDList("applicationIds", {
        nullable: true,
        description: "Applications the policy applies to; null means every application, [] none",
      }),
      vulnerabilitySeverity: t.field({
        type: SeverityEnum,
        nullable: true,
        description: "Minimum severity; null means any",
        resolve: (c) => c.vulnerabilitySeverity as never,
      }),
      slaBreached: t.boolean({
        nullable: true,
        description: "True: only vulnerabilities past their remediation deadline match; null: any",
        resolve: (c) => c.slaBreached ?? null,
      }),
    }),
  });

export const PolicyRef = builder.prismaObject("Policy", {
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    action: t.expose("action", { type: PolicyActionEnum }),
    conditions: t.field({
      type: PolicyConditions,
      resolve: (p) => ({
        applicationIds: p.allApplications ? null : p.applicationIds,
        vulnerabilitySeverity: p.vulnerabilitySeverity,
        ...(p.slaBreached && { slaBreached: true as const }),
      }),
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

const PolicyConnection = countedConnection(PolicyRef, "Policy");

const PolicyConditionsInput = builder.inputType("PolicyConditionsInput", {
  fields: (t) => ({
    applicationIds: t.idList({ required: false, description: "Absent or null: every application; []: none" }),
    vulnerabilitySeverity: t.field({ type: SeverityEnum, required: false }),
    slaBreached: t.boolean({
      required: false,
      description: "True: only vulnerabilities past their remediation deadline match",
    }),
  }),
});

const CreatePolicyInput = builder.inputType("CreatePolicyInput", {
  fields: (t) => ({
    name: t.string({ required: true }),
    action: t.field({ type: PolicyActionEnum, required: true }),
    conditions: t.field({ type: PolicyConditionsInput, required: false }),
  }),
});

const UpdatePolicyInput = builder.inputType("UpdatePolicyInput", {
  description: "Supplied fields overwrite (conditions whole), omitted ones are kept, null clears.",
  fields: (t) => ({
    name: t.string({ required: false }),
    action: t.field({ type: PolicyActionEnum, required: false }),
    conditions: t.field({ type: PolicyConditionsInput, required: false }),
  }),
});

builder.queryFields((t) => ({
  policies: t.field({
    type: PolicyConnection,
    args: { first: t.arg.int(), after: t.arg.string() },
    resolve: async (_root, args, ctx) => {
      const page = pageRequestOf(args);
      const result = await policies.listPolicies(ctx.service, page);
      return toConnection(result, page.cursor, () => policies.countPolicies(ctx.service));
    },
  }),
  policy: t.prismaField({
    type: "Policy",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_query, _root, args, ctx) => policies.getPolicy(ctx.service, String(args.id)),
  }),
}));

builder.mutationFields((t) => ({
  createPolicy: t.prismaField({
    type: "Policy",
    args: { input: t.arg({ type: CreatePolicyInput, required: true }) },
    resolve: (_query, _root, args, ctx) => policies.createPolicy(ctx.service, restShaped(args.input)),
  }),
  updatePolicy: t.prismaField({
    type: "Policy",
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdatePolicyInput, required: true }) },
    resolve: (_query, _root, args, ctx) => policies.updatePolicy(ctx.service, String(args.id), restShaped(args.input)),
  }),
  deletePolicy: t.id({
    description: "Deletes the policy; returns its id.",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      await policies.deletePolicy(ctx.service, String(args.id));
      return String(args.id);
    },
  }),
}));
