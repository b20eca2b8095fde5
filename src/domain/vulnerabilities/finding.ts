// A finding as a scanner engine reports it: the domain's input for dedup, resolve and reopen.
import type { Severity } from "../validation.ts";
import type { Decision } from "./analysis.ts";

export interface Finding {
  /** Stable identity within an application: the same finding always has the same fingerprint. */
  fingerprint: string;
  title: string;
  description: string;
  severity: Severity;
  /** `CWE-<number>` */
  cwe: string;
  /** Set on sca and container findings, null on sast and dast. */
  cve: string | null;
  /**
   * CVSS v3.1 base score with one decimal: inside the severity's band for the engines; a report's
   * own score as it gives it (docs/spec/CONTRACT.md §11), even where the report's severity comes from elsewhere.
   */
  cvssScore: number;
  /** The change that introduced it: `commit 3f9c2ab`, `lodash@4.17.20`, `FROM debian:11`. */
  introducedIn: string;
  remediation: string;
  packageName: string | null;
  packageVersion: string | null;
  /** file:line (sast), URL path (dast), package coordinate (sca), image layer and package (container). */
  location: string | null;
  /**
   * Every id the report knows the finding's vulnerability by, its own first (CVE-…, GHSA-…, the
   * rule's id): what VEX statements match. Default: the CVE.
   */
  aliases?: string[];
  /** The report's own triage of it (CycloneDX `analysis`, SARIF `suppressions`), which gives its status. */
  analysis?: Decision | null;
  /**
   * The part of its tool's scan that reported it, where a report has parts that can fail or be left
   * out on their own (a SARIF run, a Trivy target, a ZAP site); null where it has none (ReportCoverage).
   */
  part?: string | null;
}

/**
 * Which of its tool's earlier findings a scan may resolve (docs/spec/CONTRACT.md §5, §11): only what it looked
 * at and found clean. An engine's scan, a Grype report or a CycloneDX one covers the whole of what
 * its tool scans (`parts: null`); a report in parts covers only those that it lists and that
 * completed, so a finding of a part it left out, or of one that failed, stays as it is.
 */
export interface ReportCoverage {
  /** The parts covered; null: all of the tool's scope. */
  readonly parts: readonly string[] | null;
  /**
   * Some part of the report failed (a SARIF run): then findings recorded without a part (before
   * parts were kept) are not resolved either, since that part may have been theirs.
   */
  readonly partFailed: boolean;
}

/** What an engine's scan covers: every finding of its type and tool. */
export const WHOLE_SCOPE: ReportCoverage = { parts: null, partFailed: false };

/**
 * Findings in batches, as their source hands them over: an engine's all at once, a report's a few
 * thousand at a time as its reader maps them (a 50 MiB report is never whole in memory).
 */
export type FindingBatches = Iterable<readonly Finding[]> | AsyncIterable<readonly Finding[]>;
