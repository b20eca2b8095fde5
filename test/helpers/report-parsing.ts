// What the report parsers' unit tests share: the errors a refused document gets, the one finding of
// a report, and the check that clipping never leaves half a surrogate pair.
import type { Finding } from "../../src/domain/vulnerabilities/finding.ts";
import type { FieldError } from "../../src/errors.ts";
import { ReportInvalid } from "../../src/scans/reports/report.ts";

/** The errors of the ReportInvalid that `parse` throws (fails when it accepts or throws anything else). */
export function invalidErrors(parse: (document: unknown) => unknown, document: unknown): FieldError[] {
  try {
    parse(document);
  } catch (error) {
    expect(error).toBeInstanceOf(ReportInvalid);
    return (error as ReportInvalid).errors;
  }
  throw new Error("parse accepted an invalid document");
}

/** The JSON Pointers of those errors. */
export const invalidPaths = (parse: (document: unknown) => unknown, document: unknown): string[] =>
  invalidErrors(parse, document).map((e) => e.path);

/** The only finding (fails when there is not exactly one). */
export function onlyFinding(findings: readonly Finding[]): Finding {
  expect(findings).toHaveLength(1);
  return findings[0]!;
}

export const hasLoneSurrogate = (text: string): boolean =>
  /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
