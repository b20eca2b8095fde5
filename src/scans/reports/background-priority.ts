// Document threads (report-worker.ts) run at a lower CPU priority than the event loop that serves
// requests: on a machine with few cores, a 10,000-statement VEX or a 50 MiB report being read would
// otherwise take the core a request's answer is waiting for. On Linux a thread's nice value is its
// own (setpriority with the thread's id); elsewhere this changes nothing.
import { readlinkSync } from "node:fs";
import { setPriority } from "node:os";

/** Nice 10: the scheduler gives such a thread about a tenth of a core that a nice-0 thread wants too. */
const BACKGROUND_NICE = 10;

export function runInBackground(): void {
  try {
    // "/proc/thread-self" links to "<pid>/task/<tid>" for the thread that reads it.
    const tid = Number(readlinkSync("/proc/thread-self").split("/").at(-1));
    if (Number.isSafeInteger(tid)) setPriority(tid, BACKGROUND_NICE);
  } catch {
    // Not Linux, or not allowed: the thread runs at the process's priority.
  }
}
