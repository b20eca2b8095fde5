// Document threads (report-worker.ts) run at the lowest CPU priority Linux has, SCHED_IDLE: on a
// machine with few cores, a 10,000-statement VEX or a 50 MiB report being read would otherwise take
// the core a request's answer is waiting for. Nice 10 alone was not enough: a nice value counts only
// against the threads of the same session (Linux's autogroups), so the thread still held its core
// against Postgres's backends, and a thread that woke waited for its turn. A SCHED_IDLE thread gives
// its core at once to any other that wakes, Postgres's included, and a core running nothing else
// counts as free (bench/notes/2026-11-27-document-threads-sched-idle.md). The cost: on a machine
// whose cores are all busy, a document waits for one. A thread's policy is its own; `chrt`
// (util-linux) sets it. Where there is no chrt the thread keeps nice 10; not on Linux, nothing
// changes.
import { execFileSync } from "node:child_process";
import { readlinkSync } from "node:fs";
import { setPriority } from "node:os";

/** The fallback where SCHED_IDLE cannot be set: the scheduler gives such a thread about a tenth of a core that a nice-0 thread of its session wants too. */
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
  try {
    execFileSync("chrt", ["--idle", "--pid", "0", String(tid)], { stdio: "ignore", timeout: 5_000 });
  } catch {
    // No chrt, or not allowed: nice 10 it is.
  }
}
