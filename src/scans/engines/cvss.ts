import type { Severity } from "../../domain/validation.ts";

/** The CVSS v3.1 qualitative rating scale; a score of 0.0 ("none") is not a finding. */
export const CVSS_BANDS: Readonly<Record<Severity, { readonly min: number; readonly max: number }>> = {
  low: { min: 0.1, max: 3.9 },
  medium: { min: 4.0, max: 6.9 },
  high: { min: 7.0, max: 8.9 },
  critical: { min: 9.0, max: 10.0 },
};

export const hasOneDecimal = (score: number): boolean => Math.round(score * 10) / 10 === score;

export function isWithinBand(severity: Severity, score: number): boolean {
  const band = CVSS_BANDS[severity];
  return score >= band.min && score <= band.max;
}
