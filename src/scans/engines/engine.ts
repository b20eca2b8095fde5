// The scanner engine contract (CONTRACT §5): one engine per scan type, pluggable, with the
// simulator as the zero-setup default and the baseline DAST crawl as a real one (SCAN_ENGINES).
import type { ScanEngineKind } from "../../config.ts";
import type { EngineSource } from "../../domain/scans/scan-source.ts";
import type { SCAN_TYPES } from "../../domain/scans/scans.schemas.ts";
import type { Finding } from "../../domain/vulnerabilities/finding.ts";
import { createBaselineEngine, type BaselineEngineOptions } from "./baseline-engine.ts";
import { createSimulatorEngine } from "./simulator.ts";

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

export interface EngineOptions {
  /** How long each simulated scan takes. */
  durationMs: number;
  /** The engine of each scan type (SCAN_ENGINES); the simulator where absent. `external` types never reach an engine. */
  kinds?: Partial<Record<ScanType, ScanEngineKind>>;
  /** Settings of the baseline engine, for the types whose kind is `baseline`. */
  baseline?: BaselineEngineOptions;
  /** Engines to use instead of the simulator for some scan types, e.g. a failing one in tests. */
  overrides?: Partial<Record<ScanType, ScannerEngine>>;
}

export function createEngines({
  durationMs,
  kinds = {},
  baseline,
  overrides = {},
}: EngineOptions): Record<ScanType, ScannerEngine> {
  const engineFor = (scanType: ScanType): ScannerEngine => {
    if (overrides[scanType]) return overrides[scanType];
    if (kinds[scanType] === "baseline") {
      if (!baseline) throw new Error(`SCAN_ENGINES runs ${scanType} on the baseline engine, but it has no settings`);
      return createBaselineEngine(baseline);
    }
    return createSimulatorEngine(scanType, { durationMs });
  };
  return {
    sast: engineFor("sast"),
    dast: engineFor("dast"),
    sca: engineFor("sca"),
    container: engineFor("container"),
  };
}
