// The scan runner: claims scans with leases, runs the engine for their type, records the outcome.
// Several instances may run against one database; a crashed one's scans are taken over when their
// lease lapses, and a graceful stop hands its scans back at once. Its loop also settles agents'
// lapsed leases (back to the queue, or failed) and external scans whose report never came. While the
// database is down it claims nothing and logs nothing (the database's health logs the outage once),
// and resumes when it is back.
import { randomUUID } from "node:crypto";
import os from "node:os";
import type { BackgroundWorker } from "../background-worker.ts";
import type { Db } from "../db/client.ts";
import type { DatabaseHealth } from "../db/database-health.ts";
import { listen, type Listening, type ListenSource } from "../db/listen.ts";
import { expireAgentLeases } from "../domain/scans/agent-leases.ts";
import {
  claimScans,
  completeScan,
  failOverdueExternalScans,
  failScan,
  releaseLeases,
  renewLease,
} from "../domain/scans/scan-lifecycle.ts";
import { SCAN_QUEUED_CHANNEL } from "../domain/scans/scan-queued-channel.ts";
import type { Scan } from "../generated/prisma/client.ts";
import type { Logger } from "../log.ts";
import type { ScannerEngine, ScanType } from "./engines/engine.ts";

export interface ScanRunnerOptions {
  db: Db;
  /** Where to LISTEN for wake-ups in the polling loop (the instance's shared listener, a session's URL or pool); without it the runner only polls. */
  listenOn?: ListenSource;
  engines: Record<ScanType, ScannerEngine>;
  log: Logger;
  health?: DatabaseHealth;
  /** How long a claim lasts without renewal; a dead runner's scans are taken over after it. */
  leaseMs: number;
  /** Renewal period while the engine runs (default a third of the lease). */
  renewEveryMs?: number;
  pollIntervalMs?: number;
  /** Scans this instance runs at once. */
  concurrency?: number;
  maxAttempts?: number;
  owner?: string;
  /** Scan types completed by a report from CI (SCAN_ENGINES), and how long one may wait for it. */
  external?: { scanTypes: readonly ScanType[]; timeoutMs: number };
}

export interface ScanRunner extends BackgroundWorker {
  readonly owner: string;
  /** Claims what is claimable now (up to the free slots), runs it to the end; resolves with the count claimed. */
  runOnce(): Promise<number>;
}

type AbortReason = "stopping" | "lease-lost";

export function createScanRunner(options: ScanRunnerOptions): ScanRunner {
  const { db, engines, log, leaseMs, health } = options;
  /** Logs a failure, unless it is the database being away (its health logs that, once). */
  const failed = (err: unknown, message: string, fields: object = {}) => {
    if (!health?.failed(err)) log.error({ err, ...fields }, message);
  };
  const owner = options.owner ?? `${os.hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  const lease = { owner, leaseMs };
  const concurrency = options.concurrency ?? 4;
  const maxAttempts = options.maxAttempts ?? 3;
  const renewEveryMs = options.renewEveryMs ?? Math.max(Math.floor(leaseMs / 3), 100);
  const inFlight = new Map<string, { controller: AbortController; done: Promise<void> }>();

  let stopping = false;
  let pollTimer: NodeJS.Timeout | undefined;
  let listening: Listening | undefined;
  let claiming: Promise<unknown> | undefined;

  async function run(scan: Scan): Promise<void> {
    const controller = new AbortController();
    const abort = (reason: AbortReason) => controller.abort(reason);
    const heartbeat = setInterval(() => {
      renewLease(db, scan.id, lease).then(
        (held) => held || abort("lease-lost"),
        (err) => health?.failed(err) || log.warn({ err, scanId: scan.id }, "scan lease renewal failed"),
      );
    }, renewEveryMs);
    const done = (async () => {
      try {
        const application = await db.application.findUnique({ where: { id: scan.applicationId } });
        if (!application) return; // deleted meanwhile: its scan went with it
        let findings;
        try {
          findings = await engines[scan.scanType].scan(
            {
              applicationId: application.id,
              applicationName: application.name,
              scanType: scan.scanType,
              scanId: scan.id,
              language: application.language,
              repoUrl: application.repoUrl,
              serviceUrl: application.serviceUrl,
            },
            controller.signal,
          );
        } catch (err) {
          if (controller.signal.aborted) return; // stop() releases; a lost lease belongs to someone else
          log.warn({ err, scanId: scan.id }, "scan engine failed");
          await failScan(db, scan.id, owner, err instanceof Error ? err.message : String(err));
          return;
        }
        if (controller.signal.aborted) return;
        const completed = await completeScan(db, scan.id, owner, findings, engines[scan.scanType].source);
        if (!completed) log.info({ scanId: scan.id }, "scan lease lost before completion; result dropped");
      } catch (err) {
        // Recording failed (e.g. the database): hand the scan back; maxAttempts bounds the retries.
        failed(err, "recording the scan outcome failed", { scanId: scan.id });
        await releaseLeases(db, owner, { scanId: scan.id, refundAttempt: false }).catch(() => {});
      } finally {
        clearInterval(heartbeat);
        inFlight.delete(scan.id);
      }
    })();
    inFlight.set(scan.id, { controller, done });
    return done;
  }

  /** Claims into the free slots and starts the runs; resolves with the runs' completion promises. */
  async function claim(): Promise<Promise<void>[]> {
    if (stopping) return [];
    const external = options.external ?? { scanTypes: [], timeoutMs: 0 };
    await expireAgentLeases(db);
    await failOverdueExternalScans(db, external.scanTypes, external.timeoutMs);
    const free = concurrency - inFlight.size;
    if (free <= 0) return [];
    const scans = await claimScans(db, { ...lease, limit: free, maxAttempts, externalScanTypes: external.scanTypes });
    return scans.map((scan) => run(scan));
  }

  /** One claim round at a time; a wake-up during a round triggers one more round after it. */
  let again = false;
  let waitingForDatabase = false;
  function tick(): void {
    if (stopping) return;
    if (health && !health.available()) {
      if (!waitingForDatabase) {
        waitingForDatabase = true;
        void health.whenAvailable().then(() => {
          waitingForDatabase = false;
          tick();
        });
      }
      return;
    }
    if (claiming) {
      again = true;
      return;
    }
    claiming = claim()
      .then((runs) => runs.forEach((r) => void r.then(tick)))
      .catch((err) => failed(err, "claiming scans failed"))
      .finally(() => {
        claiming = undefined;
        if (again) {
          again = false;
          tick();
        }
      });
  }

  return {
    name: "scan-runner",
    owner,
    async runOnce() {
      const runs = await claim();
      await Promise.all(runs);
      return runs.length;
    },
    start() {
      stopping = false;
      pollTimer = setInterval(tick, options.pollIntervalMs ?? 1000);
      if (options.listenOn) {
        listening = listen(options.listenOn, [SCAN_QUEUED_CHANNEL], () => tick(), {
          log,
          health,
          onListening: tick, // whatever was queued while not listening
        });
      }
      tick();
    },
    async stop() {
      stopping = true;
      clearInterval(pollTimer);
      await listening?.close();
      listening = undefined;
      await claiming;
      for (const { controller } of inFlight.values()) controller.abort("stopping" satisfies AbortReason);
      await Promise.all([...inFlight.values()].map((r) => r.done));
      await releaseLeases(db, owner, { refundAttempt: true });
    },
  };
}
