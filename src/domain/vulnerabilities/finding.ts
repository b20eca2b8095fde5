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
   * own score as it gives it (CONTRACT §11), even where the report's severity comes from elsewhere.
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
}

/**
 * Findings in batches, as their source hands them over: an engine's all at once, a report's a few
 * thousand at a time as its reader maps them (a 50 MiB report is never whole in memory).
 */
export type FindingBatches = Iterable<readonly Finding[]> | AsyncIterable<readonly Finding[]>;
