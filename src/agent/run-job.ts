// One claimed scan, start to end: a fresh work directory, the executor, heartbeats while it works,
// then the report uploaded (gzip) or the scan failed with the reason; the work directory removed
// whatever happened. A lost lease stops the tool and drops its result (the scan is someone else's
// now); the agent stopping stops the tool and hands the scan back.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import type { Logger } from "../log.ts";
import { ApiError, type ApiClient, type ClaimedJob } from "./api-client.ts";
import type { Executor } from "./executor.ts";

const MAX_REASON_LENGTH = 10_000;
const UPLOAD_ATTEMPTS = 3;

export interface JobContext {
  api: ApiClient;
  executor: Executor;
  log: Logger;
  leaseSeconds: number;
  /** Where work directories are made. */
  workRoot?: string;
  /** Aborts when the agent gives up on work in progress (shutdown grace over). */
  shutdown: AbortSignal;
}

/** Text the service stores as it is: no U+0000, no lone surrogate (a tail may cut a pair), bounded. */
export function asReason(text: string): string {
  const clean = text
    .replace(/\u0000/g, "\uFFFD")
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
  return clean.length <= MAX_REASON_LENGTH
    ? clean
    : `${[...clean].slice(0, MAX_REASON_LENGTH - 20).join("")}… (truncated)`;
}

const leaseLost = (err: unknown) => err instanceof ApiError && (err.status === 409 || err.status === 404);
/** The service could not be reached, or may answer otherwise later (5xx, 429). */
const transient = (err: unknown) => err instanceof ApiError && !err.permanent;

export async function runJob(job: ClaimedJob, ctx: JobContext): Promise<void> {
  const log = ctx.log.child({ scanId: job.scanId, scanType: job.scanType, applicationId: job.application.id });
  const stop = new AbortController();
  let why: "lease-lost" | "shutdown" | undefined;
  const abort = (reason: "lease-lost" | "shutdown") => {
    why ??= reason;
    stop.abort(reason);
  };
  const onShutdown = () => abort("shutdown");
  ctx.shutdown.addEventListener("abort", onShutdown, { once: true });
  if (ctx.shutdown.aborted) onShutdown();
  const heartbeat = setInterval(
    () => {
      ctx.api.heartbeat(job).catch((err: unknown) => {
        if (leaseLost(err)) {
          log.warn({ err: String(err) }, "lease lost: stopping the scan and dropping its result");
          abort("lease-lost");
        } else log.warn({ err: String(err) }, "heartbeat failed; trying again");
      });
    },
    (ctx.leaseSeconds * 1000) / 3,
  );

  const workDir = await mkdtemp(path.join(ctx.workRoot ?? os.tmpdir(), "appsec-agent-"));
  try {
    log.info({ executor: ctx.executor.description }, "scan started");
    const outcome = await ctx.executor.run(job, workDir, stop.signal);
    if (stop.signal.aborted) throw new Error("aborted");
    if (outcome.kind === "failed") {
      log.info({ reason: outcome.reason }, "scan failed");
      await ctx.api.fail(job, asReason(outcome.reason));
      return;
    }
    try {
      await upload(ctx, job, outcome, stop.signal, log);
      log.info("report uploaded; scan completed");
    } catch (err) {
      if (stop.signal.aborted || leaseLost(err) || !(err instanceof ApiError) || transient(err)) throw err;
      // The service read the report and refused it: say why on the scan.
      await ctx.api.fail(job, asReason(`The service refused the report: ${(err as Error).message}`));
      log.warn({ err: String(err) }, "report refused; scan failed");
    }
  } catch (err) {
    if (why === "shutdown") {
      await ctx.api.release(job).then(
        () => log.info("scan handed back to the queue"),
        (releaseErr: unknown) =>
          log.warn({ err: String(releaseErr) }, "could not hand the scan back; its lease will lapse"),
      );
    } else if (why === "lease-lost" || leaseLost(err)) {
      log.warn({ err: String(err) }, "the scan is no longer ours; result dropped");
    } else if (transient(err)) {
      log.error(
        { err: String(err) },
        "could not reach the service; the scan's lease will lapse and it will be claimed again",
      );
    } else {
      log.error({ err }, "the agent failed on this scan");
      await ctx.api.fail(job, asReason(`The agent failed: ${(err as Error).message}`)).catch(() => {});
    }
  } finally {
    clearInterval(heartbeat);
    ctx.shutdown.removeEventListener("abort", onShutdown);
    await rm(workDir, { recursive: true, force: true });
  }
}

/** Uploads the report, trying again on what may pass (the network, a 5xx, a 429). */
async function upload(
  ctx: JobContext,
  job: ClaimedJob,
  report: Parameters<ApiClient["uploadReport"]>[1],
  signal: AbortSignal,
  log: Logger,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await ctx.api.uploadReport(job, report, signal);
    } catch (err) {
      if (signal.aborted || !transient(err) || attempt >= UPLOAD_ATTEMPTS) throw err;
      log.warn({ err: String(err), attempt }, "report upload failed; trying again");
      await delay(1000 * 2 ** (attempt - 1), undefined, { signal });
    }
  }
}
