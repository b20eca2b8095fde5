// Document threads (report-worker.ts) run at nice 10: on a machine with few cores, a 10,000-statement
// VEX or a 50 MiB report being read gives way to the threads answering requests, and still moves.
// Not SCHED_IDLE, tried from 2026-11-27 to 2026-12-02: within its scheduling group (Linux's
// autogroup, one per session: the service, and `npm start`'s embedded Postgres with it) such a
// thread weighs 3 against a nice-0 thread's 1,024, so while the group keeps the cores busy it all
// but stops. A VEX of 2,000 statements, two busy processes in the service's session, took 12.5 s
// under SCHED_IDLE and 0.46 s at nice 10; an upload's transaction and its application's lock stayed
// open all that time (bench/notes/2026-12-02-document-threads-nice-10.md). A thread's nice value is
// its own on Linux (setpriority with its thread id); elsewhere nothing changes.
import { readlinkSync } from "node:fs";
import { setPriority } from "node:os";

/** About a tenth of a core that a nice-0 thread of its group wants too. */
const BACKGROUND_NICE = 10;

/** This thread's id on Linux ("/proc/thread-self" links to "<pid>/task/<tid>"), or undefined. */
function ownThreadId(): number | undefined {
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").at(-1));
    return Number.isSafeInteger(tid) ? tid : undefined;
  } catch {
    return undefined;
  }
}

export function runInBackground(): void {
  const tid = ownThreadId();
  if (tid === undefined) return;
  try {
    setPriority(tid, BACKGROUND_NICE);
  } catch {
    // Not allowed: the thread keeps the process's priority.
  }
}
