// The agent: `concurrency` slots, each long-polling the service for a scan of the types it has
// executors for, running it, and asking again. stop() stops claiming at once and lets the scans in
// progress finish within the grace, then hands back what is left; stopNow() hands back at once.
// A claim the service refuses for good (a bad token, a type it does not hand to agents) stops the
// agent: asking again would get the same answer.
import type { Logger } from "../log.ts";
import { ApiError, type ApiClient } from "./api-client.ts";
import type { ScanType } from "./agent-config.ts";
import type { Executor } from "./executor.ts";
import { runJob } from "./run-job.ts";

/** How long one claim waits for a scan (the service's most). */
const WAIT_SECONDS = 30;
const MAX_BACKOFF_MS = 30_000;

export interface AgentOptions {
  api: ApiClient;
  executors: ReadonlyMap<ScanType, Executor>;
  name: string;
  concurrency: number;
  leaseSeconds: number;
  shutdownGraceMs: number;
  workRoot?: string;
  log: Logger;
}

export interface ScanAgent {
  /** Resolves when every slot has stopped: with the error that stopped the agent, if any. */
  run(): Promise<Error | undefined>;
  stop(): void;
  stopNow(): void;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });

export function createAgent(options: AgentOptions): ScanAgent {
  const { api, log } = options;
  const scanTypes = [...options.executors.keys()];
  const claiming = new AbortController();
  const working = new AbortController();
  let fatal: Error | undefined;
  let graceTimer: NodeJS.Timeout | undefined;

  async function slot(index: number): Promise<void> {
    let backoffMs = 1000;
    while (!claiming.signal.aborted) {
      let job;
      try {
        job = await api.claim(
          { scanTypes, agent: options.name, leaseSeconds: options.leaseSeconds, waitSeconds: WAIT_SECONDS },
          claiming.signal,
        );
        backoffMs = 1000;
      } catch (err) {
        if (claiming.signal.aborted) return;
        if (err instanceof ApiError && err.permanent) {
          fatal ??= err;
          log.error({ err: err.message }, "the service refuses this agent's claims; stopping");
          agent.stopNow();
          return;
        }
        log.warn({ err: String(err), retryInMs: backoffMs }, "claim failed; trying again");
        await pause(backoffMs, claiming.signal);
        backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
        continue;
      }
      if (!job) continue;
      await runJob(job, {
        api,
        executor: options.executors.get(job.scanType)!,
        log: log.child({ slot: index }),
        leaseSeconds: options.leaseSeconds,
        workRoot: options.workRoot,
        shutdown: working.signal,
      });
    }
  }

  const agent: ScanAgent = {
    async run() {
      log.info(
        { agent: options.name, scanTypes, concurrency: options.concurrency },
        "agent started; waiting for scans",
      );
      await Promise.all(Array.from({ length: options.concurrency }, (_, i) => slot(i)));
      clearTimeout(graceTimer);
      await api.close();
      log.info("agent stopped");
      return fatal;
    },
    stop() {
      if (claiming.signal.aborted) return;
      log.info(
        { graceMs: options.shutdownGraceMs },
        "stopping: no new claims; scans in progress may finish within the grace",
      );
      claiming.abort();
      graceTimer = setTimeout(() => agent.stopNow(), options.shutdownGraceMs);
    },
    stopNow() {
      claiming.abort();
      clearTimeout(graceTimer);
      if (!working.signal.aborted) working.abort();
    },
  };
  return agent;
}
