// From a report's bytes to its findings, a batch at a time (docs/spec/CONTRACT.md §11). A SARIF log, the format
// of the largest reports (100,000 results in 50 MiB), is read as a stream, twice: first each result
// is checked as it goes by and the log's outline (runs, tools, rules) kept; then each result is
// mapped against that outline. So no more than a slice of results and a batch of findings exist at
// once, never the parsed document. Other formats, and logs without results, are parsed whole.
import type * as Sarif from "sarif";
import { chunksOf } from "../../domain/chunks.ts";
import { unsafeInput } from "../../domain/validation.ts";
import type { Finding } from "../../domain/vulnerabilities/finding.ts";
import { invalid, type FieldError } from "../../errors.ts";
import { jsonPointer } from "./json-pointer.ts";
import { MAX_ERRORS } from "./json-schema-check.ts";
import { checkReadRequest, readReport } from "./read-report.ts";
import type { ReadOptions, ReportHeader } from "./report.ts";
import {
  checkSarifLog,
  checkSarifResult,
  isNotAFinding,
  SARIF_INVALID,
  sarifReport,
  sarifRuns,
} from "./sarif-report.ts";
import { sarifResults } from "./sarif-results-stream.ts";

/** Findings handed over at a time: what record-findings.ts writes per statement. */
export const FINDINGS_PER_BATCH = 5_000;

export interface ReportReading {
  report: ReportHeader;
  /** The findings, mapped as they are asked for. */
  batches(): Iterator<Finding[]>;
}

const refused = (unsafe: FieldError) => invalid("The report is invalid", [unsafe]);

/** The first pass over a SARIF log: undefined when the bytes hold no results (or, unnamed, no SARIF log). */
function readStreamedSarif(
  bytes: Uint8Array,
  format: string | undefined,
  options: ReadOptions,
): ReportReading | undefined {
  const errors: FieldError[] = [];
  let unsafe: FieldError | null = null;
  const results = sarifResults(bytes);
  let step = results.next();
  for (; !step.done; step = results.next()) {
    const { run, index, result } = step.value;
    if (unsafe || errors.length >= MAX_ERRORS) continue;
    unsafe = unsafeInput(result, jsonPointer, ["runs", run, "results", index]);
    if (!unsafe && !isNotAFinding(result)) errors.push(...checkSarifResult(result, run, index));
  }
  const outline = step.value;
  if (outline === undefined || (format === undefined && !sarifReport.detect(outline))) return undefined;
  unsafe ??= unsafeInput(outline, jsonPointer);
  if (unsafe) throw refused(unsafe);
  errors.unshift(...checkSarifLog(outline));
  if (errors.length > 0) throw invalid(SARIF_INVALID, errors.slice(0, MAX_ERRORS));

  const { report, findingOf } = sarifRuns(outline as unknown as Sarif.Log, options);
  function* batches(): Generator<Finding[]> {
    let batch: Finding[] = [];
    for (const { run, result } of sarifResults(bytes)) {
      const finding = isNotAFinding(result) ? null : findingOf(run, result as Sarif.Result);
      if (finding) batch.push(finding);
      if (batch.length === FINDINGS_PER_BATCH) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }
  return { report, batches };
}

function readWhole(bytes: Uint8Array, format: string | undefined, options: ReadOptions): ReportReading {
  const document: unknown = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"));
  // What JSON.parse accepts but no report may hold (nesting deeper than 64 levels, a lone
  // surrogate, U+0000) is refused with its JSON Pointer before any parser walks the document.
  const unsafe = unsafeInput(document, jsonPointer);
  if (unsafe) throw refused(unsafe);
  const { findings, ...report } = readReport(document, format, options);
  return { report, batches: () => chunksOf(findings, FINDINGS_PER_BATCH) };
}

/**
 * `format`: the `?format=` of the upload, if any. Throws SyntaxError when the bytes are not one JSON
 * document, and a validation DomainError naming JSON Pointers when it is not a valid report.
 */
export function readReportBytes(
  bytes: Uint8Array,
  format: string | undefined,
  options: ReadOptions = {},
): ReportReading {
  checkReadRequest(format, options);
  const streamed = format === undefined || format === "sarif" ? readStreamedSarif(bytes, format, options) : undefined;
  return streamed ?? readWhole(bytes, format, options);
}
