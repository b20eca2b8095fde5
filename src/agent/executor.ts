// What runs a claimed scan: given the job and a fresh work directory, it produces a report file
// (uploaded by the agent) or a reason the scan failed. One kind per executor in the configuration.
import { AgentConfigError, type ExecutorConfig, type ReportFormat, type ScanType } from "./agent-config.ts";
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

export function createExecutor(scanType: ScanType, config: ExecutorConfig): Executor {
  if ("command" in config) return commandExecutor(config, toolEnvironment());
  // The built-in passive DAST (`{"engine": "baseline"}`, CONTRACT §12) is its own executor kind: an
  // executor that runs the service's baseline engine on job.application.serviceUrl and writes its
  // ZAP JSON to a file in workDir ({ kind: "report", format: "zap" }). This build has no engine.
  throw new AgentConfigError(`executors.${scanType}: the "${config.engine}" engine is not available in this build of the agent`);
}
