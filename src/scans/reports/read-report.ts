// From a parsed JSON document to a report: the format the caller named, or the one the document
// shows (docs/spec/CONTRACT.md §11), then that format's parser.
import { invalid } from "../../errors.ts";
import { cyclonedxReport } from "./cyclonedx-report.ts";
import { grypeReport } from "./grype-report.ts";
import {
  REPORT_FORMATS,
  ReportInvalid,
  type ParsedReport,
  type ReadOptions,
  type ReportFormat,
  type ReportParser,
} from "./report.ts";
import { sarifReport } from "./sarif-report.ts";
import { trivyReport } from "./trivy-report.ts";
import { zapReport } from "./zap-report.ts";

const PARSERS: readonly ReportParser[] = [sarifReport, cyclonedxReport, trivyReport, grypeReport, zapReport];

const isFormat = (value: string): value is ReportFormat => (REPORT_FORMATS as readonly string[]).includes(value);

/** The upload's `?format=` and options, checked before its report is read. */
export function checkReadRequest(format: string | undefined, options: ReadOptions): void {
  if (format !== undefined && !isFormat(format)) {
    throw invalid("Unknown report format", [
      { path: "format", message: `Must be one of ${REPORT_FORMATS.join(", ")}` },
    ]);
  }
  const checkoutPath = options.checkoutPath;
  if (checkoutPath !== undefined && (checkoutPath.length > 4096 || !/^(?:\/|[A-Za-z]:[\\/])/.test(checkoutPath))) {
    throw invalid("Invalid checkout path", [
      { path: "checkoutPath", message: "Must be an absolute path of at most 4096 characters" },
    ]);
  }
}

/** `format`: the `?format=` of the upload, if any. Throws a validation DomainError naming JSON Pointers. */
export function readReport(document: unknown, format?: string, options: ReadOptions = {}): ParsedReport {
  checkReadRequest(format, options);
  const parser = format ? PARSERS.find((p) => p.format === format) : PARSERS.find((p) => p.detect(document));
  if (!parser) {
    throw invalid("The report's format could not be recognised", [
      {
        path: "",
        message: `Not a report of a known format (${REPORT_FORMATS.join(", ")}); name it with ?format= if it is one`,
      },
    ]);
  }
  try {
    return parser.parse(document, options);
  } catch (err) {
    if (err instanceof ReportInvalid) throw invalid(err.message, err.errors);
    throw err;
  }
}
