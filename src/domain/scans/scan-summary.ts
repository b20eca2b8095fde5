import type { Severity } from "../validation.ts";

export interface ScanSummary {
  totalFindings: number;
  critical: number;
  high: number;
  medium: number;
  low: number;
}

/** Counts what one scan reported, by severity; totalFindings is their sum. */
export function summarize(findings: readonly { severity: Severity }[]): ScanSummary {
  const summary: ScanSummary = { totalFindings: 0, critical: 0, high: 0, medium: 0, low: 0 };
  for (const { severity } of findings) summary[severity] += 1;
  summary.totalFindings = summary.critical + summary.high + summary.medium + summary.low;
  return summary;
}
