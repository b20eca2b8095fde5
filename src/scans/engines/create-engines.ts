// One engine per scan type: the simulator as the zero-setup default, the baseline DAST crawl as a
// real one (SCAN_ENGINES), or an override given by a test.
import type { ScanEngineKind } from "../../config.ts";
import { createBaselineEngine, type BaselineEngineOptions } from "./baseline-engine.ts";
import type { ScannerEngine, ScanType } from "./engine.ts";
import { createSimulatorEngine } from "./simulator.ts";

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
