// Preloaded with `--require` by the start script, so it runs before any of the service's JavaScript,
// when the only threads besides the main one are those Node's platform starts: V8's workers (the
// garbage collector's parallel and concurrent work, for every isolate of the process), its
// delayed-task thread and the inspector's signal thread. They get nice 10, as the document threads
// do (scans/reports/background-priority.ts): collecting a 10,000-statement VEX's garbage then
// waits for a free core instead of taking the one a request's answer waits for. With a core free
// they run as before. The event loop, libuv's thread pool and worker threads, all started later,
// keep the process's priority (bench/notes/2026-11-26-v8-helpers-nice-10.md).
// A thread's nice value is its own on Linux (setpriority with its id); elsewhere nothing changes.
import { readdirSync } from "node:fs";
import { setPriority } from "node:os";
import { isMainThread } from "node:worker_threads";

const HELPERS_NICE = 10;

/** The ids of this process's threads other than the main one (Linux), or none. */
function otherThreads(): number[] {
  try {
    return readdirSync("/proc/self/task")
      .map(Number)
      .filter((tid) => tid !== process.pid);
  } catch {
    return [];
  }
}

// A worker thread preloads this too; by then the thread pool and other workers exist.
if (isMainThread) {
  for (const tid of otherThreads()) {
    try {
      setPriority(tid, HELPERS_NICE);
    } catch {
      // Not allowed here: the thread keeps the process's priority.
    }
  }
}
