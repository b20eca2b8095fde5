// Engines tests control: scripted findings, failures on demand, and scans that block until released.
import type { Finding, ScannerEngine, ScanTarget, ScanType } from "../../src/scans/engines/engine.ts";
import type { Severity } from "../../src/domain/validation.ts";

export function finding(key: string, severity: Severity = "high"): Finding {
  return {
    fingerprint: `fp-${key}`,
    title: `Finding ${key}`,
    description: `Description of ${key}`,
    severity,
    cwe: "CWE-79",
    cve: null,
    cvssScore: severity === "critical" ? 9.5 : severity === "high" ? 7.5 : severity === "medium" ? 5.0 : 2.0,
    introducedIn: "commit abc1234",
    remediation: "Fix it",
    packageName: null,
    packageVersion: null,
    location: `src/${key}.ts:1`,
  };
}

/** Reports whatever `next` returns for each scan (a function of the target, or a fixed list). */
export function scriptedEngine(
  scanType: ScanType,
  next: (target: ScanTarget) => Finding[] | Promise<Finding[]>,
): ScannerEngine {
  return { scanType, scan: async (target) => next(target) };
}

export function failingEngine(scanType: ScanType, message = "scanner crashed"): ScannerEngine {
  return {
    scanType,
    async scan() {
      throw new Error(message);
    },
  };
}

/** Each scan waits until the test calls release(); an abort rejects it, as real engines do. */
export function blockingEngine(scanType: ScanType, findings: Finding[] = [finding("blocked")]) {
  const started: ScanTarget[] = [];
  let releaseAll: () => void = () => {};
  let gate = new Promise<void>((resolve) => (releaseAll = resolve));
  const engine: ScannerEngine = {
    scanType,
    async scan(target, signal) {
      started.push(target);
      await new Promise<void>((resolve, reject) => {
        signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
        void gate.then(resolve);
      });
      return findings;
    },
  };
  return {
    engine,
    started,
    release() {
      releaseAll();
      gate = new Promise<void>((resolve) => (releaseAll = resolve));
    },
  };
}

/** Polls `check` until it returns a truthy value, at most `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 25));
  }
}
