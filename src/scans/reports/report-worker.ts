// Runs in a worker thread (read-report-off-thread.ts): from a report's bytes to its findings. A
// 50 MiB report takes seconds of parsing, checking and mapping; here that work never blocks the
// service's event loop. Over the task's port it first posts the ReadOutcome; then, each time the
// reader asks ("next"), the next batch of findings, and null after the last. It maps a batch only
// when asked, so the findings never pile up ahead of their writing, and ends when the reader
// closes its end.
import type { MessagePort } from "node:worker_threads";
import type { VexReading } from "../../domain/vulnerabilities/vex-statement.ts";
import { DomainError, type FieldError } from "../../errors.ts";
import { readVexDocument } from "../../vex/read-vex-document.ts";
import { readReportBytes, type ReportReading } from "./read-report-bytes.ts";
import type { ReadOptions, ReportHeader } from "./report.ts";

export interface ReadTask extends ReadOptions {
  bytes: Uint8Array;
  format?: string;
  port: MessagePort;
}

/** What went wrong reading a document. Errors do not cross threads with their class: outcomes say it as data. */
export type ReadFailure = { ok: false; problem: "malformed_json"; message: string } | { ok: false; problem: "invalid"; message: string; errors: FieldError[] };

export type ReadOutcome = { ok: true; report: ReportHeader } | ReadFailure;

/** A reader that asks for nothing this long has gone (its transaction's own limit). */
const READER_PATIENCE_MS = 120_000;

/** Whether the reader asks for more, rather than closing its end (or going quiet). */
function asked(port: MessagePort): Promise<boolean> {
  return new Promise((resolve) => {
    const answer = (more: boolean) => () => {
      port.off("message", onMessage);
      port.off("close", onClose);
      clearTimeout(timer);
      resolve(more);
    };
    const onMessage = answer(true);
    const onClose = answer(false);
    const timer = setTimeout(onClose, READER_PATIENCE_MS);
    port.on("message", onMessage);
    port.on("close", onClose);
  });
}

/** A reading's failure as data; anything else is thrown on. */
function failureOf(err: unknown, what: string): ReadFailure {
  if (err instanceof SyntaxError) return { ok: false, problem: "malformed_json", message: `The ${what} is not a JSON document` };
  if (err instanceof DomainError && err.kind === "invalid") return { ok: false, problem: "invalid", message: err.message, errors: err.details.errors ?? [] };
  throw err;
}

function open({ bytes, format, checkoutPath }: ReadTask): { outcome: ReadOutcome; reading?: ReportReading } {
  try {
    const reading = readReportBytes(bytes, format, { checkoutPath });
    return { outcome: { ok: true, report: reading.report }, reading };
  } catch (err) {
    return { outcome: failureOf(err, "report") };
  }
}

export interface VexTask {
  bytes: Uint8Array;
  format?: string;
}

export type VexOutcome = { ok: true; reading: VexReading } | ReadFailure;

/** A VEX document's statements (src/vex/), read here for the same reason as a report: 10,000 statements take a few hundred ms to check. */
export function readVexTask({ bytes, format }: VexTask): VexOutcome {
  try {
    const document: unknown = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"));
    return { ok: true, reading: readVexDocument(document, format) };
  } catch (err) {
    return failureOf(err, "VEX document");
  }
}

export default async function readReportTask(task: ReadTask): Promise<void> {
  const { port } = task;
  try {
    const { outcome, reading } = open(task);
    port.postMessage(outcome);
    const batches = reading?.batches();
    // Until the reader closes its end, so that the task never ends before its last message is taken.
    while (await asked(port)) {
      const next = batches?.next();
      port.postMessage(next && !next.done ? next.value : null);
    }
  } finally {
    port.close();
  }
}
