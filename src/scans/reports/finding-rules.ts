// Mapping rules every report parser shares (docs/spec/CONTRACT.md §11): severity from a CVSS score, the score
// to use when a report gives none, CWE and CVE spelling, and fingerprints.
import { createHash } from "node:crypto";
import type { Severity } from "../../domain/validation.ts";
import { CVSS_BANDS } from "../engines/cvss.ts";

/** The CVSS v3 qualitative band of a score; null for 0 (none) or what is not a score. */
export function severityOfScore(score: number): Severity | null {
  if (!Number.isFinite(score) || score <= 0 || score > 10) return null;
  if (score >= CVSS_BANDS.critical.min) return "critical";
  if (score >= CVSS_BANDS.high.min) return "high";
  if (score >= CVSS_BANDS.medium.min) return "medium";
  return "low";
}

/** The report's CVSS v3 base score when it has one (rounded to one decimal), else the band's lower bound. */
export function cvssScoreFor(severity: Severity, reported?: number | null): number {
  if (reported !== undefined && reported !== null && Number.isFinite(reported) && reported > 0 && reported <= 10) {
    return Math.round(reported * 10) / 10;
  }
  return CVSS_BANDS[severity].min;
}

/** DefectDojo's "unknown": what a finding gets when its report names no CWE. */
export const UNKNOWN_CWE = "CWE-0";

/**
 * `CWE-<n>` with the lowest number among those given, in any spelling reports use (`CWE-79`,
 * `cwe-79`, `external/cwe/cwe-79`, `CWE-79: Improper Neutralization…`, `79`, the number 79);
 * UNKNOWN_CWE when none.
 */
export function cweOf(candidates: readonly unknown[]): string {
  const numbers = candidates.flatMap((c) => {
    if (typeof c === "number" && Number.isInteger(c) && c > 0) return [c];
    if (typeof c !== "string") return [];
    const match = /^(?:.*\/)?(?:cwe[-_ ]?)?(\d{1,6})(?:\s*:.*)?$/is.exec(c.trim());
    return match ? [Number(match[1])] : [];
  });
  return numbers.length ? `CWE-${Math.min(...numbers)}` : UNKNOWN_CWE;
}

const CVE_ID = /^CVE-\d{4}-\d{4,}$/i;

/** The first CVE id among an id and its aliases, upper-cased; null when there is none. */
export function cveOf(candidates: readonly unknown[]): string | null {
  const found = candidates.find((c): c is string => typeof c === "string" && CVE_ID.test(c.trim()));
  return found ? found.trim().toUpperCase() : null;
}

/** A stable fingerprint from the parts that identify a finding within its format and tool. */
export function fingerprintOf(
  format: string,
  tool: string,
  parts: readonly (string | number | null | undefined)[],
): string {
  return createHash("sha256")
    .update(
      [format, tool.toLowerCase(), ...parts.map((p) => (p === null || p === undefined ? "" : String(p)))].join("\0"),
    )
    .digest("hex");
}

/** Text cut to at most `max` characters (an ellipsis marks the cut), so one absurd message cannot bloat a row. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  // Never cut a surrogate pair in half: the result must stay text Postgres can store.
  const end = /[\uD800-\uDBFF]/.test(text[max - 2] ?? "") ? max - 2 : max - 1;
  return `${text.slice(0, end)}…`;
}

export const TITLE_MAX = 300;
export const TEXT_MAX = 20_000;

/** The first line of a text, clipped to a title's length. */
export const titleOf = (text: string): string => clip(text.trim().split(/\r?\n/, 1)[0] ?? "", TITLE_MAX);

/** `name@version`, or the name alone when the version is unknown. */
export const packageCoordinate = (name: string, version: string | null | undefined): string =>
  version ? `${name}@${version}` : name;
