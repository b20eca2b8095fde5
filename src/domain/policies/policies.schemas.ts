import { z } from "zod";
import { ID_PATTERN, isId } from "../../ids.ts";
import { nameField, severityField } from "../validation.ts";

export const POLICY_ACTIONS = ["allow", "block", "monitor"] as const;

const applicationIdField = z
  .string()
  .refine(isId, "Must be an application id")
  .meta({ format: "uuid", pattern: ID_PATTERN })
  .transform((id) => id.toLowerCase());

// Absent or null applicationIds: every application; an array (even empty): exactly those.
const conditionsSchema = z.strictObject({
  applicationIds: z.array(applicationIdField).nullable().optional(),
  vulnerabilitySeverity: severityField.nullable().optional(),
  /** Only vulnerabilities past their remediation deadline match (docs/spec/CONTRACT.md §19). */
  slaBreached: z.boolean().nullable().optional(),
});
export type PolicyConditionsInput = z.infer<typeof conditionsSchema>;

export const createPolicySchema = z.strictObject({
  name: nameField,
  action: z.enum(POLICY_ACTIONS),
  conditions: conditionsSchema.nullable().optional(),
});
export type CreatePolicyInput = z.infer<typeof createPolicySchema>;

/** Merge semantics: a supplied `conditions` replaces the stored one whole; null clears it. */
export const updatePolicySchema = createPolicySchema.partial();
export type UpdatePolicyInput = z.infer<typeof updatePolicySchema>;
