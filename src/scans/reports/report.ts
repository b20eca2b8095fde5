// What a scanner's report becomes once read (docs/spec/CONTRACT.md §11): the findings the engines also produce,
// with the tool that wrote them and the scan type they belong to. One parser per format turns a
// parsed JSON document into this; read-report.ts picks the parser.
import type { ScanReport } from "../../domain/scans/scan-reports.service.ts";
import type { ReportFormat } from "../../domain/scans/scans.schemas.ts";
import type { Finding } from "../../domain/vulnerabilities/finding.ts";
import type { FieldError } from "../../errors.ts";

export { REPORT_FORMATS, type ReportFormat } from "../../domain/scans/scans.schemas.ts";

/** What a report says about itself: the domain's ScanReport but its findings. */
export type ReportHeader = Omit<ScanReport, "findings">;

/** What a report becomes once read whole. */
export type ParsedReport = ReportHeader & { findings: Finding[] };

/** A JSON object (not an array, not null): what detect() looks at first. */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export interface ReportParser {
  readonly format: ReportFormat;
  /** Whether the document looks like this format (a cheap look at its top-level shape). */
  detect(document: unknown): boolean;
  /** Throws ReportInvalid, naming JSON Pointer paths into the document, when it is not a valid report. */
  parse(document: unknown, options?: ReadOptions): ParsedReport;
}

export interface ReadOptions {
  /**
   * Where the repository was checked out when the tool ran (as GitHub's upload-sarif
   * `checkout_path`): absolute `file://` locations under it become relative, so findings keep
   * their identity whichever runner directory the next scan runs in.
   */
  checkoutPath?: string;
}

/** A document that is not a valid report of its format; `errors[].path` are JSON Pointers into it. */
export class ReportInvalid extends Error {
  constructor(
    message: string,
    readonly errors: FieldError[],
  ) {
    super(message);
  }
}
