// A triage decision about a vulnerability (docs/spec/CONTRACT.md §13), in CycloneDX's `analysis` vocabulary:
// what a VEX statement or a scanner's report says, and the status it gives.
import { z } from "zod";
import type { VULNERABILITY_STATUSES } from "./vulnerabilities.schemas.ts";

export type VulnerabilityStatus = (typeof VULNERABILITY_STATUSES)[number];

/** CycloneDX `analysis.state`; OpenVEX statuses map onto four of them (openvex-document.ts). */
export const ANALYSIS_STATES = [
  "not_affected",
  "false_positive",
  "in_triage",
  "exploitable",
  "resolved",
  "resolved_with_pedigree",
] as const;
export type AnalysisState = (typeof ANALYSIS_STATES)[number];

/** OpenVEX 0.2.0's justifications (the VEX working group's labels). */
export const OPENVEX_JUSTIFICATIONS = [
  "component_not_present",
  "vulnerable_code_not_present",
  "vulnerable_code_not_in_execute_path",
  "vulnerable_code_cannot_be_controlled_by_adversary",
  "inline_mitigations_already_exist",
] as const;
/** CycloneDX's `analysis.justification`. */
export const CYCLONEDX_JUSTIFICATIONS = [
  "code_not_present",
  "code_not_reachable",
  "requires_configuration",
  "requires_dependency",
  "requires_environment",
  "protected_by_compiler",
  "protected_at_runtime",
  "protected_at_perimeter",
  "protected_by_mitigating_control",
] as const;
/** A justification is kept in the vocabulary of the document that gave it; exports translate (vex-justifications.ts). */
export const JUSTIFICATIONS = [...OPENVEX_JUSTIFICATIONS, ...CYCLONEDX_JUSTIFICATIONS] as const;
export type Justification = (typeof JUSTIFICATIONS)[number];

/** CycloneDX `analysis.response`. */
export const ANALYSIS_RESPONSES = [
  "can_not_fix",
  "will_not_fix",
  "update",
  "rollback",
  "workaround_available",
] as const;
export type AnalysisResponse = (typeof ANALYSIS_RESPONSES)[number];

export const ANALYSIS_SOURCES = ["vex", "report"] as const;
export type AnalysisSource = (typeof ANALYSIS_SOURCES)[number];

/** What a statement or a report says about a vulnerability. */
export interface Decision {
  state: AnalysisState;
  justification: Justification | null;
  detail: string | null;
  response: AnalysisResponse[];
}

/** The decision in force on a vulnerability, with where it came from, who made it and when. */
export interface Analysis extends Decision {
  source: AnalysisSource;
  by: string | null;
  /** ISO 8601 */
  at: string;
  /** When an accepting decision ends (docs/spec/CONTRACT.md §19): the vulnerability is open again then. */
  expiresAt?: string;
}

/** The decision as made by `by` from `source` at `at`, its keys in the order the API writes them. */
export const analysisOfDecision = (
  { state, justification, detail, response }: Decision,
  source: AnalysisSource,
  by: string | null,
  at: string,
): Analysis => ({
  state,
  justification,
  detail,
  response,
  source,
  by,
  at,
});

/** docs/spec/CONTRACT.md §13's mapping from a decision to a status. */
export const STATUS_OF_STATE: Readonly<Record<AnalysisState, VulnerabilityStatus>> = {
  not_affected: "accepted",
  false_positive: "accepted",
  in_triage: "in_progress",
  exploitable: "open",
  resolved: "resolved",
  resolved_with_pedigree: "resolved",
};

/** Whether two decisions say the same (who and when aside). */
export const sameDecision = (a: Decision | null | undefined, b: Decision): boolean =>
  !!a &&
  a.state === b.state &&
  (a.justification ?? null) === b.justification &&
  (a.detail ?? null) === b.detail &&
  (a.response ?? []).join() === b.response.join();

export const analysisViewSchema = z
  .object({
    state: z
      .enum(ANALYSIS_STATES)
      .describe(
        "CycloneDX's analysis.state; OpenVEX's statuses arrive as not_affected, in_triage, exploitable and resolved",
      ),
    justification: z
      .enum(JUSTIFICATIONS)
      .nullable()
      .describe("In the vocabulary of the document that gave it (OpenVEX or CycloneDX)"),
    detail: z.string().nullable(),
    response: z.array(z.enum(ANALYSIS_RESPONSES)),
    source: z.enum(ANALYSIS_SOURCES).describe("A VEX document, or the scanner's report that found it"),
    by: z.string().nullable().describe("The token's subject that sent the VEX, or the scan's triggeredBy"),
    at: z.iso.datetime(),
    expiresAt: z.iso
      .datetime()
      .optional()
      .describe("When this decision ends and the vulnerability is open again (CONTRACT §19); absent when it does not"),
  })
  .meta({ id: "VulnerabilityAnalysis" });
