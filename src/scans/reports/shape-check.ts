// Checks a report in a format with no published JSON Schema (Trivy, Grype, ZAP) against the shape
// its tool's documentation gives, with zod; unknown fields are allowed, as tools add them often.
import type { z } from "zod";
import { jsonPointer } from "./json-pointer.ts";
import { ReportInvalid } from "./report.ts";

const MAX_ERRORS = 20;

/** The document as `schema` reads it; ReportInvalid naming JSON Pointers when it does not fit. */
export function checkShape<T>(schema: z.ZodType<T>, document: unknown, what: string): T {
  const result = schema.safeParse(document);
  if (result.success) return result.data;
  const errors = result.error.issues
    .slice(0, MAX_ERRORS)
    .map((issue) => ({ path: jsonPointer(issue.path), message: issue.message }));
  throw new ReportInvalid(`The report is not a valid ${what}`, errors);
}
