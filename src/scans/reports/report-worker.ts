// Runs in a worker thread (read-report-off-thread.ts): from a report's bytes to its findings. A
// 50 MiB report takes seconds of parsing, checking and mapping; here that work never blocks the
// service's event loop. Over the task's port it first posts the ReadOutcome; then, each time the
// reader asks ("next"), the next batch of findings, and null after the last. It maps a batch only
// when asked, so the findings never pile up ahead of their writing, and ends when the reader
// closes its end. A VEX document goes the same way (applyVexTask).
import type { MessagePort } from "node:worker_threads";
import pg from "pg";
import { BulkTurns } from "../../db/bulk-turns.ts";
import type { VexCounts } from "../../domain/vulnerabilities/vex-plan.ts";
import { applyVexReading } from "../../domain/vulnerabilities/vex-transaction.ts";
import type { VexReading } from "../../domain/vulnerabilities/vex-statement.ts";
import { DomainError, type FieldError } from "../../errors.ts";
import { readVexDocument } from "../../vex/read-vex-document.ts";
import { runInBackground } from "./background-priority.ts";
import { readReportBytes, type ReportReading } from "./read-report-bytes.ts";
import type { ReadOptions, ReportHeader } from "./report.ts";
import type { DatabaseAddress } from "../../db/pool-mode.ts";
import { withConnection } from "./worker-connections.ts";

export interface ReadTask extends ReadOptions {
  bytes: Uint8Array;
  format?: string;
  port: MessagePort;
}

/** What went wrong reading a document. Errors do not cross threads with their class: outcomes say it as data. */
export type ReadFailure =
  | { ok: false; problem: "malformed_json"; message: string }
  | { ok: false; problem: "invalid"; message: string; errors: FieldError[] };

export type ReadOutcome = { ok: true; report: ReportHeader } | ReadFailure;

runInBackground();

/** A reader that asks for nothing this long has gone (its transaction's own limit). */
const READER_PATIENCE_MS = 120_000;

/** The reader's next message; undefined once it closed its end instead (or went quiet). */
function nextMessage(port: MessagePort): Promise<unknown> {
  return new Promise((resolve) => {
    const answer = (message: unknown) => {
      port.off("message", answer);
      port.off("close", onClose);
      clearTimeout(timer);
      resolve(message);
    };
    const onClose = () => answer(undefined);
    const timer = setTimeout(onClose, READER_PATIENCE_MS);
    port.on("message", answer);
    port.on("close", onClose);
  });
}

/** A reading's failure as data; anything else is thrown on. */
function failureOf(err: unknown, what: string): ReadFailure {
  if (err instanceof SyntaxError)
    return { ok: false, problem: "malformed_json", message: `The ${what} is not a JSON document` };
  if (err instanceof DomainError && err.kind === "invalid")
    return { ok: false, problem: "invalid", message: err.message, errors: err.details.errors ?? [] };
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
  port: MessagePort;
  /** Where the apply's transaction connects (its own connection: none of the service's is usable in this thread). */
  database: DatabaseAddress;
  /** The service's bulk turns (bulk-turns.ts), which the reading and the apply take. */
  turns: SharedArrayBuffer;
}

export type VexReadOutcome = { ok: true; errors: FieldError[] } | ReadFailure;

/** What the service sends once the caller may apply the document to the application. */
export interface VexApplyRequest {
  applicationId: string;
  by: string;
  at: number;
  /** When its accepting decisions end, if they do. */
  expiresAt?: number;
}

/** An error of the apply, as data (errors do not cross threads with their class or code). */
export interface VexApplyFailure {
  message: string;
  code?: string;
  /** Whether Postgres answered it (pg's DatabaseError), rather than the connection failing. */
  fromDatabase: boolean;
}

export type VexApplyOutcome = { ok: true; counts: VexCounts } | { ok: false; failure: VexApplyFailure };

function readVex({ bytes, format }: VexTask): { outcome: VexReadOutcome; reading?: VexReading } {
  try {
    const document: unknown = JSON.parse(
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"),
    );
    const reading = readVexDocument(document, format);
    return { outcome: { ok: true, errors: reading.errors }, reading };
  } catch (err) {
    return { outcome: failureOf(err, "VEX document") };
  }
}

/** Applies the document in a transaction on this thread's own connection (worker-connections.ts). */
async function applyVex(
  reading: VexReading,
  database: DatabaseAddress,
  request: VexApplyRequest,
  turns: BulkTurns,
): Promise<VexApplyOutcome> {
  try {
    const counts = await withConnection(database, (client) =>
      applyVexReading(
        client,
        reading,
        {
          applicationId: request.applicationId,
          by: request.by,
          at: new Date(request.at),
          ...(request.expiresAt !== undefined && { expiresAt: new Date(request.expiresAt) }),
        },
        turns,
      ),
    );
    return { ok: true, counts };
  } catch (err) {
    const { message, code } = err as { message?: unknown; code?: unknown };
    return {
      ok: false,
      failure: {
        message: String(message),
        code: typeof code === "string" ? code : undefined,
        fromDatabase: err instanceof pg.DatabaseError,
      },
    };
  }
}

/**
 * A VEX document, read here for the same reason as a report (10,000 statements take a few hundred
 * ms to check), and applied from here (vex-transaction.ts): over the task's port it posts the
 * VexReadOutcome; then, once the service asks, the VexApplyOutcome; and ends when the service
 * closes its end.
 */
export async function applyVexTask(task: VexTask): Promise<void> {
  const { port } = task;
  const turns = new BulkTurns(task.turns);
  try {
    const { outcome, reading } = await turns.take(() => readVex(task));
    port.postMessage(outcome);
    // Until the service closes its end (at once on a failure), so that the task never ends before its message is taken.
    const request = (await nextMessage(port)) as VexApplyRequest | undefined;
    if (!request || !reading) return;
    port.postMessage(await applyVex(reading, task.database, request, turns));
    await nextMessage(port);
  } finally {
    port.close();
  }
}

export default async function readReportTask(task: ReadTask): Promise<void> {
  const { port } = task;
  try {
    const { outcome, reading } = open(task);
    port.postMessage(outcome);
    const batches = reading?.batches();
    // Until the reader closes its end, so that the task never ends before its last message is taken.
    while ((await nextMessage(port)) !== undefined) {
      const next = batches?.next();
      port.postMessage(next && !next.done ? next.value : null);
    }
  } finally {
    port.close();
  }
}
