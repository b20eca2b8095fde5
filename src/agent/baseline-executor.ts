// The `{"engine": "baseline"}` executor: the service's built-in passive DAST (docs/spec/CONTRACT.md §12) run from
// the agent's network on the application's serviceUrl. Its ZAP JSON report is uploaded like any
// tool's, so the findings are those the service's own baseline engine would record.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { TargetAllowList } from "../net/target-allow-list.ts";
import { runBaselineScan, TargetUnreachableError } from "../scans/dast/baseline-scan.ts";
import type { EngineExecutorConfig } from "./agent-config.ts";
import type { Executor } from "./executor.ts";

export function baselineExecutor(config: EngineExecutorConfig): Executor {
  const targetPolicy = {
    allowPrivateTargets: config.allowPrivateTargets,
    allowList: config.targetAllow.length > 0 ? TargetAllowList.parse(config.targetAllow.join(",")) : undefined,
  };
  return {
    description: "the built-in baseline passive DAST",
    async run(job, workDir, signal) {
      const serviceUrl = job.application.serviceUrl;
      if (!serviceUrl)
        return { kind: "failed", reason: "The application has no serviceUrl for the baseline scan to crawl" };
      try {
        const report = await runBaselineScan(serviceUrl, {
          targetPolicy,
          maxPages: config.maxPages,
          maxDurationMs: config.maxDurationSeconds * 1000,
          concurrency: config.concurrency,
          signal,
        });
        const file = path.join(workDir, "zap-report.json");
        await writeFile(file, JSON.stringify(report));
        return { kind: "report", path: file, format: "zap" };
      } catch (err) {
        if (signal.aborted) throw err;
        // Nothing answered, the target policy refused it, or the serviceUrl cannot be crawled.
        if (err instanceof TargetUnreachableError || err instanceof TypeError)
          return { kind: "failed", reason: err.message };
        throw err;
      }
    },
  };
}
