// What runs a claimed scan: given the job and a fresh work directory, it produces a report file
// (uploaded by the agent) or a reason the scan failed. create-executor.ts builds one per executor in
// the configuration.
import type { ReportFormat, ScanType } from "./agent-config.ts";

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
