// The scanner engine contract (CONTRACT §5): one engine per scan type, pluggable, with the
// simulator as the zero-setup default.
import { SCAN_TYPES } from "../../domain/scans/scans.schemas.ts";
import type { Finding } from "../../domain/vulnerabilities/finding.ts";
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
  /** Rejects with the signal's abort error as soon as the signal is aborted. */
  scan(target: ScanTarget, signal?: AbortSignal): Promise<Finding[]>;
}

export interface EngineOptions {
  /** How long each simulated scan takes. */
  durationMs: number;
  /** Engines to use instead of the simulator for some scan types, e.g. a failing one in tests. */
  overrides?: Partial<Record<ScanType, ScannerEngine>>;
}

export function createEngines({ durationMs, overrides = {} }: EngineOptions): Record<ScanType, ScannerEngine> {
  const engineFor = (scanType: ScanType): ScannerEngine =>
    overrides[scanType] ?? createSimulatorEngine(scanType, { durationMs });
  return {
    sast: engineFor("sast"),
    dast: engineFor("dast"),
    sca: engineFor("sca"),
    container: engineFor("container"),
  };
}
