import { z } from "zod";
import { SLA_FILTER_STATES } from "../sla/sla.schemas.ts";
import { severityField } from "../validation.ts";

export const VULNERABILITY_STATUSES = ["open", "in_progress", "resolved", "accepted"] as const;

/** Filters of ListApplicationVulnerabilities: a value outside its enum is 400 (docs/spec/SPEC.md §4 rule 2). */
export const vulnerabilityFilterSchema = z.object({
  severity: severityField.optional(),
  status: z.enum(VULNERABILITY_STATUSES).optional(),
  /** The tool that reported them (extension, docs/spec/CONTRACT.md §11), exactly as it names itself. */
  tool: z.string().min(1).max(200).optional(),
  /** Where open and in-progress ones stand against their deadline (docs/spec/CONTRACT.md §19). */
  sla: z.enum(SLA_FILTER_STATES).optional(),
});
export type VulnerabilityFilter = z.infer<typeof vulnerabilityFilterSchema>;

/** Filters arrive as raw strings (query parameters, GraphQL arguments) and are validated here. */
export interface RawVulnerabilityFilter {
  severity?: unknown;
  status?: unknown;
  tool?: unknown;
  sla?: unknown;
}
