// Runs in a worker thread (read-report-off-thread.ts): from a report's bytes to its findings. A
// 50 MiB report takes a second or more of parsing, walking and schema checking; here that work
// never blocks the service's event loop, and the parsed document lives and dies in this thread:
// only the findings travel back.
import { unsafeInput } from "../../domain/validation.ts";
import { DomainError, type FieldError } from "../../errors.ts";
import { jsonPointer } from "./json-pointer.ts";
import { readReport } from "./read-report.ts";
import type { ParsedReport, ReadOptions } from "./report.ts";

export interface ReadTask extends ReadOptions {
  bytes: Uint8Array;
  format?: string;
}

/** Errors do not cross threads with their class: outcomes say what went wrong as data. */
export type ReadOutcome =
  | { ok: true; report: ParsedReport }
  | { ok: false; problem: "malformed_json"; message: string }
  | { ok: false; problem: "invalid"; message: string; errors: FieldError[] };

export default function readReportTask({ bytes, format, checkoutPath }: ReadTask): ReadOutcome {
  let document: unknown;
  try {
    document = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"));
  } catch {
    return { ok: false, problem: "malformed_json", message: "The report is not a JSON document" };
  }
  // What JSON.parse accepts but no report may hold (nesting deeper than 64 levels, a lone
  // surrogate, U+0000) is refused with its JSON Pointer before any parser walks the document.
  const unsafe = unsafeInput(document, jsonPointer);
  if (unsafe) return { ok: false, problem: "invalid", message: "The report is invalid", errors: [unsafe] };
  try {
    return { ok: true, report: readReport(document, format, { checkoutPath }) };
  } catch (err) {
    if (err instanceof DomainError && err.kind === "invalid") return { ok: false, problem: "invalid", message: err.message, errors: err.details.errors ?? [] };
    throw err;
  }
}
