// The scanner engine contract (docs/spec/CONTRACT.md §5): one engine per scan type, pluggable (SCAN_ENGINES);
// create-engines.ts builds them.
import type { EngineSource } from "../../domain/scans/scan-source.ts";
import type { SCAN_TYPES } from "../../domain/scans/scans.schemas.ts";
import type { Finding } from "../../domain/vulnerabilities/finding.ts";

export type { Finding };

export type ScanType = (typeof SCAN_TYPES)[number];

/** What an engine needs to know about the application being scanned. */
export interface ScanTarget {
  applicationId: string;
  applicationName: string;
  scanType: ScanType;
  scanId: string;
  language: string | null;
  repoUrl: string | null;
  serviceUrl: string | null;
}

export interface ScannerEngine {
  readonly scanType: ScanType;
  /** What its scans record as their source; left as the scan has it when absent. */
  readonly source?: EngineSource;
  /** The engine scans the application's serviceUrl: triggering it without one is refused. */
  readonly needsServiceUrl?: boolean;
  /** Rejects with the signal's abort error as soon as the signal is aborted. */
  scan(target: ScanTarget, signal?: AbortSignal): Promise<Finding[]>;
}
