// What runs a claimed scan: given the job and a fresh work directory, it produces a report file
// (uploaded by the agent) or a reason the scan failed. One kind per executor in the configuration.
import type { ExecutorConfig, ReportFormat, ScanType } from "./agent-config.ts";
import { baselineExecutor } from "./baseline-executor.ts";
import { commandExecutor } from "./command-executor.ts";

/** The claimed scan, as the claim answered it. */
export interface Job {
  scanId: string;
  scanType: ScanType;
  application: { id: string; name: string; repoUrl: string | null; serviceUrl: string | null };
}

export type ExecutorOutcome =
  | {
      kind: "report";
      path: string;
      /** Else the service detects it from the document. */
      format?: ReportFormat;
      /** Where the source was checked out: absolute file:// locations under it become relative. */
      checkoutPath?: string;
    }
  | { kind: "failed"; reason: string };

export interface Executor {
  /** For logs: what it runs. */
  readonly description: string;
  /** Resolves with the outcome; when `signal` aborts (lease lost, shutdown) it stops the work and rejects. */
  run(job: Job, workDir: string, signal: AbortSignal): Promise<ExecutorOutcome>;
}

/** Environment of the tools the agent runs: its own, less the agent's token. */
export function toolEnvironment(): NodeJS.ProcessEnv {
  const { APPSEC_TOKEN: _token, ...env } = process.env;
  return env;
}

export function createExecutor(config: ExecutorConfig): Executor {
  return "command" in config ? commandExecutor(config, toolEnvironment()) : baselineExecutor(config);
}
