// Reads reports in a small pool of worker threads (piscina), so a 50 MiB report never blocks the
// event loop that serves every other request, and its parsed document never lives on the main
// thread. Threads start with the first report and end 10 s after the last one, giving their heap
// back.
import { availableParallelism } from "node:os";
import { Piscina } from "piscina";
import type { ReadOptions } from "./report.ts";
import type { ReadOutcome, ReadTask } from "./report-worker.ts";

const compiled = import.meta.url.endsWith(".js");

let pool: Piscina<ReadTask, ReadOutcome> | undefined;
const readers = () =>
  (pool ??= new Piscina({
    filename: new URL(compiled ? "./report-worker.js" : "./report-worker-ts.mjs", import.meta.url).href,
    minThreads: 0,
    maxThreads: Math.max(1, Math.min(2, availableParallelism() - 1)),
    idleTimeout: 10_000,
  }));

/** The report in `bytes`, or what is wrong with it. The bytes move to the worker: the caller must not use them after. */
export async function readReportOffThread(bytes: Buffer, format: string | undefined, options: ReadOptions = {}): Promise<ReadOutcome> {
  // Only a buffer that owns its whole memory can be moved; a pooled small one is copied.
  const own = bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.byteLength ? bytes : Buffer.from(bytes);
  const task: ReadTask = { bytes: own, format, ...options };
  return readers().run(task, { transferList: [own.buffer as ArrayBuffer] });
}

/** Ends the worker threads (graceful shutdown). */
export async function closeReportReaders(): Promise<void> {
  const closing = pool;
  pool = undefined;
  await closing?.destroy();
}
