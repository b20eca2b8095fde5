// The `baseline` engine for dast scans (SCAN_ENGINES=dast:baseline): the passive crawl of the
// application's serviceUrl, its ZAP report read by the same reader as a report uploaded from ZAP,
// so a finding is the same whichever of the two found it.
import type { TargetPolicy } from "../../net/ssrf-guard.ts";
import {
  BASELINE_ENGINE,
  runBaselineScan,
  TargetUnreachableError,
  type BaselineScanOptions,
} from "../dast/baseline-scan.ts";
import { zapReport } from "../reports/zap-report.ts";
import type { ScannerEngine } from "./engine.ts";

export type BaselineEngineOptions = Pick<BaselineScanOptions, "maxPages" | "maxDurationMs" | "concurrency" | "tls"> & {
  targetPolicy: TargetPolicy;
};

const POLICY_HINT =
  "scan targets on a private network need SCAN_TARGET_ALLOW (their hosts or networks) or SCAN_ALLOW_PRIVATE_TARGETS=true";

export function createBaselineEngine(options: BaselineEngineOptions): ScannerEngine {
  return {
    scanType: "dast",
    source: { kind: "engine", format: "zap", tool: BASELINE_ENGINE.name, toolVersion: BASELINE_ENGINE.version },
    needsServiceUrl: true,
    async scan(target, signal) {
      if (!target.serviceUrl) throw new Error("The application has no serviceUrl for the baseline scan to crawl");
      try {
        const report = await runBaselineScan(target.serviceUrl, { ...options, signal });
        return zapReport.parse(report).findings;
      } catch (err) {
        if (err instanceof TargetUnreachableError && err.kind === "forbidden")
          throw new Error(`${err.reason} (${POLICY_HINT})`);
        throw err;
      }
    },
  };
}
