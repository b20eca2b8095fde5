// A passive rule of the baseline engine: one ZAP alert (its plugin id, alert reference, name, risk
// and CWE as ZAP's alert documentation gives them) and the check that raises it on one response.
// Rules only look: they never send anything.
import type { ObservedResponse } from "./observed-response.ts";

/** ZAP's risk codes the rules raise: 1 low, 2 medium, 3 high (0, informational, never becomes a finding). */
export type ZapRisk = 1 | 2 | 3;
/** ZAP's confidence codes: 1 low, 2 medium, 3 high. */
export type ZapConfidence = 1 | 2 | 3;

/** One place on one response where the rule fires. */
export interface RuleHit {
  /** The header, cookie, or URL the alert is about (part of the finding's identity). */
  param?: string;
  evidence?: string;
  otherInfo?: string;
}

export interface PassiveRule {
  pluginId: number;
  /** ZAP's alert reference: the plugin id, or `<pluginId>-<n>` for one of a rule's alerts. */
  alertRef: string;
  name: string;
  risk: ZapRisk;
  confidence: ZapConfidence;
  cweId: number;
  wascId: number;
  /** What the rule looks at and when it fires, in a sentence (the rules table of docs/users/scans-and-agents.md). */
  inspects: string;
  description: string;
  solution: string;
  references: readonly string[];
  check(response: ObservedResponse): RuleHit[];
}
