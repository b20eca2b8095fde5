// Reads reports in a small pool of worker threads (piscina), so a 50 MiB report never blocks the
// event loop that serves every other request, and never lives on the main thread as a document:
// its findings come over a MessagePort a batch at a time, as the scan's transaction asks for them
// (one batch ahead, mapped while the one before is written).
// Threads start with the first report. One stays, its code compiled and warm: on a 2-vCPU machine a
// VEX of 10,000 statements applied 0.4 s sooner after 30 s of idle than on a thread started anew,
// for 17-70 MiB more resident memory while idle (bench/notes/2026-11-27-vex-warm-thread.md). Any
// other ends 10 s after its last task.
import { availableParallelism } from "node:os";
import { MessageChannel, type MessagePort } from "node:worker_threads";
import pg from "pg";
import { Piscina } from "piscina";
import { processBulkTurns } from "../../db/bulk-turns.ts";
import { addressOf } from "../../db/pool-mode.ts";
import type { ScanReport } from "../../domain/scans/scan-reports.service.ts";
import type { Finding } from "../../domain/vulnerabilities/finding.ts";
import type { VexDocument } from "../../domain/vulnerabilities/vex.service.ts";
import type { VexTarget } from "../../domain/vulnerabilities/vex-transaction.ts";
import type { ReadOptions } from "./report.ts";
import type {
  ReadOutcome,
  ReadTask,
  VexApplyFailure,
  VexApplyOutcome,
  VexApplyRequest,
  VexReadOutcome,
  VexTask,
} from "./report-worker.ts";

const compiled = import.meta.url.endsWith(".js");

let pool: Piscina<ReadTask | VexTask, unknown> | undefined;
const readers = () =>
  (pool ??= new Piscina({
    filename: new URL(compiled ? "./report-worker.js" : "./report-worker-ts.mjs", import.meta.url).href,
    minThreads: 1,
    maxThreads: Math.max(1, Math.min(2, availableParallelism() - 1)),
    idleTimeout: 10_000,
    // Between tasks a thread runs its event loop (timers, sockets) instead of sleeping in
    // Atomics.wait: the connection it keeps between applies closes on its own (worker-connections.ts).
    atomics: "disabled",
  }));

export type ReportRead =
  | Exclude<ReadOutcome, { ok: true }>
  /** `close()` ends the reading, whether or not the findings were all taken: call it when done. */
  | { ok: true; report: ScanReport; close(): void };

/**
 * The messages of a reading's port, in order, one per call; each rejects once the reading task has
 * failed and nothing is left to take. (Not Promise.race with the task: every race would stay
 * attached to the task's promise, and keep each batch of findings alive, until the task ends.)
 */
function messagesOf(port: MessagePort, task: Promise<void>): () => Promise<unknown> {
  const arrived: unknown[] = [];
  let waiting: { resolve(message: unknown): void; reject(err: unknown): void } | undefined;
  let failure: unknown;
  port.on("message", (message) => {
    const receiver = waiting;
    waiting = undefined;
    if (receiver) receiver.resolve(message);
    else arrived.push(message);
  });
  task
    .then(
      // The task ends only after this side closes the port, so its end before that is a failure.
      () => (failure = new Error("The report reader ended before it answered")),
      (err: unknown) => (failure = err),
    )
    .finally(() => waiting?.reject(failure));
  return () => {
    if (arrived.length > 0) return Promise.resolve(arrived.shift());
    if (failure !== undefined) return Promise.reject(failure);
    return new Promise((resolve, reject) => (waiting = { resolve, reject }));
  };
}

/**
 * Only a buffer that owns its whole memory can be moved to a thread; any other (a small one from
 * Node's shared pool, a slice) is copied into one that does. Not with Buffer.from, which takes a
 * small copy from the pool again: since Node 21 transferring the pool's memory throws a
 * DataCloneError (Node 20 copied it silently).
 */
function movable(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.byteLength) return bytes;
  const own = Buffer.alloc(bytes.byteLength); // never from the pool
  bytes.copy(own);
  return own;
}

/**
 * Runs a reading task (`name`, the worker's default export when absent) with the bytes moved to it
 * and a port of its own: this side's end of the port, its messages in order, and how to end it.
 */
function startTask(bytes: Buffer, task: (own: Buffer, port: MessagePort) => ReadTask | VexTask, name?: string) {
  const own = movable(bytes);
  const { port1: port, port2 } = new MessageChannel();
  const nextMessage = messagesOf(
    port,
    readers().run(task(own, port2), { name, transferList: [own.buffer as ArrayBuffer, port2] }) as Promise<void>,
  );
  return { port, nextMessage, close: () => port.close() };
}

/** The report in `bytes`, or what is wrong with it. The bytes move to the worker: the caller must not use them after. */
export async function readReportOffThread(
  bytes: Buffer,
  format: string | undefined,
  options: ReadOptions = {},
): Promise<ReportRead> {
  const { port, nextMessage, close } = startTask(bytes, (own, port2) => ({
    bytes: own,
    format,
    ...options,
    port: port2,
  }));
  try {
    const outcome = (await nextMessage()) as ReadOutcome;
    if (!outcome.ok) {
      close();
      return outcome;
    }
    async function* findings(): AsyncGenerator<Finding[]> {
      try {
        port.postMessage("next");
        for (;;) {
          const batch = (await nextMessage()) as Finding[] | null;
          if (batch === null) return;
          port.postMessage("next"); // the worker maps the next batch while this one is written
          yield batch;
        }
      } finally {
        close();
      }
    }
    return { ok: true, report: { ...outcome.report, findings: findings() }, close };
  } catch (err) {
    close();
    throw err;
  }
}

export type VexRead = Exclude<VexReadOutcome, { ok: true }> | { ok: true; document: VexDocument };

/** The apply's error as the worker described it, with what tells a connection failure or a constraint (its code). */
function reviveFailure({ message, code, fromDatabase }: VexApplyFailure): Error {
  const err = fromDatabase ? new pg.DatabaseError(message, 0, "error") : new Error(message);
  return Object.assign(err, { code });
}

/**
 * A VEX document, read in the same threads (report-worker.ts's applyVexTask), and applied there
 * when asked, on a connection of its own to the pool's database: neither the document nor its
 * rows ever come to this thread. The bytes move to the worker.
 */
export async function readVexOffThread(bytes: Buffer, format: string | undefined, database: pg.Pool): Promise<VexRead> {
  const address = addressOf(database);
  const { port, nextMessage, close } = startTask(
    bytes,
    (own, port2) => ({ bytes: own, format, port: port2, database: address, turns: processBulkTurns.buffer }),
    "applyVexTask",
  );
  try {
    const outcome = (await nextMessage()) as VexReadOutcome;
    if (!outcome.ok) {
      close();
      return outcome;
    }
    const apply = async ({ applicationId, by, at, expiresAt }: VexTarget) => {
      port.postMessage({
        applicationId,
        by,
        at: at.getTime(),
        ...(expiresAt && { expiresAt: expiresAt.getTime() }),
      } satisfies VexApplyRequest);
      const applied = (await nextMessage()) as VexApplyOutcome;
      if (!applied.ok) throw reviveFailure(applied.failure);
      return applied.counts;
    };
    return { ok: true, document: { errors: outcome.errors, apply, close } };
  } catch (err) {
    close();
    throw err;
  }
}

/** Ends the worker threads (graceful shutdown). */
export async function closeReportReaders(): Promise<void> {
  const closing = pool;
  pool = undefined;
  await closing?.destroy();
}
