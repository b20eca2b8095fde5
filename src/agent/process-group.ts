// Runs a program in a process group of its own, so a timeout or an abort can end it together with
// everything it started (a scanner's workers, `sh -c`'s children): SIGTERM to the whole group,
// SIGKILL after a grace if anything is left. Whatever the group left behind when the program
// itself exits is killed too, so no process outlives its job or keeps writing into its work
// directory. Keeps the last lines of stderr, which is what a failure reason quotes.
import { spawn } from "node:child_process";

export const KILL_GRACE_MS = 5000;
const STDERR_TAIL_LINES = 20;
const STDERR_TAIL_BYTES = 8 * 1024;

export interface GroupRun {
  /** The program's exit code; null when a signal ended it. */
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** The last lines it wrote to stderr (at most 20, 8 KiB). */
  stderrTail: string;
  /** Set when it could not be started (e.g. ENOENT: not installed). */
  spawnError?: Error;
}

export interface GroupOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal?: AbortSignal;
  /** A file descriptor its stdout goes to; otherwise stdout is discarded. */
  stdoutFd?: number;
  /** Called with the group's id once it runs (tests watch it). */
  onStart?: (pid: number) => void;
}

/** Sends `signal` to every process of the group; false when none is left. */
function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false; // ESRCH: the group is gone
  }
}

/** Keeps the end of a stream of text: the last `maxBytes`, later cut to whole lines. */
function tail(maxBytes: number) {
  let kept = "";
  return {
    push(chunk: string) {
      kept = (kept + chunk).slice(-maxBytes);
    },
    lines(count: number): string {
      return kept
        .split(/\r?\n/)
        .filter((line) => line.trim() !== "")
        .slice(-count)
        .join("\n");
    },
  };
}

export function runInProcessGroup(command: string, args: readonly string[], options: GroupOptions): Promise<GroupRun> {
  return new Promise((resolve) => {
    const stderr = tail(STDERR_TAIL_BYTES);
    let timedOut = false;
    let aborted = false;
    let killTimer: NodeJS.Timeout | undefined;
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      detached: true, // its own process group, whose id is its pid
      stdio: ["ignore", options.stdoutFd ?? "ignore", "pipe"],
    });
    const end = (reason: "timeout" | "abort") => {
      if (reason === "timeout") timedOut = true;
      else aborted = true;
      if (child.pid === undefined || !signalGroup(child.pid, "SIGTERM")) return;
      killTimer = setTimeout(() => signalGroup(child.pid!, "SIGKILL"), KILL_GRACE_MS);
    };
    const timer = setTimeout(() => end("timeout"), options.timeoutMs);
    const onAbort = () => end("abort");
    options.signal?.addEventListener("abort", onAbort, { once: true });
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => stderr.push(chunk));

    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    const finish = (spawnError?: Error) => {
      clearTimeout(timer);
      clearTimeout(killTimer);
      options.signal?.removeEventListener("abort", onAbort);
      resolve({
        code: exit?.code ?? null,
        signal: exit?.signal ?? null,
        timedOut,
        aborted,
        stderrTail: stderr.lines(STDERR_TAIL_LINES),
        spawnError,
      });
    };
    child.once("error", (err) => {
      if (child.pid === undefined) finish(err); // never started; otherwise "close" still comes
    });
    child.once("spawn", () => {
      options.onStart?.(child.pid!);
      if (options.signal?.aborted) onAbort();
    });
    child.once("exit", (code, signal) => {
      exit = { code, signal };
      // Leftovers of the group (background children) go with it; they may hold stderr open.
      signalGroup(child.pid!, "SIGKILL");
    });
    child.once("close", () => finish());
  });
}
