// The Policy as callers see it. Storage splits conditions.applicationIds into two columns
// (allApplications, applicationIds) so that null (every application) and [] (none) stay distinct.
import { z } from "zod";
import type { Policy } from "../../generated/prisma/client.ts";
import { severityField } from "../validation.ts";
import { POLICY_ACTIONS } from "./policies.schemas.ts";

export const policyViewSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    action: z.enum(POLICY_ACTIONS),
    conditions: z.object({
      applicationIds: z
        .array(z.string())
        .nullable()
        .describe("Applications the policy applies to; null means every application, [] none"),
      vulnerabilitySeverity: severityField.nullable().describe("Minimum severity; null means any"),
      slaBreached: z
        .literal(true)
        .optional()
        .describe("Only vulnerabilities past their remediation deadline match (extension, CONTRACT §19); absent: any"),
    }),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: "Policy" });

export type PolicyView = z.infer<typeof policyViewSchema>;

export const toPolicyView = (p: Policy): PolicyView => ({
  id: p.id,
  name: p.name,
  action: p.action,
  conditions: {
    applicationIds: p.allApplications ? null : p.applicationIds,
    vulnerabilitySeverity: p.vulnerabilitySeverity,
    ...(p.slaBreached && { slaBreached: true as const }),
  },
  createdAt: p.createdAt.toISOString(),
  updatedAt: p.updatedAt.toISOString(),
});
