// No process a test starts outlives the jest process that started it, however that process ends.
//
// Linux gives no portable way for a Node process to take its children down when it dies by
// SIGKILL (jest ending a stuck worker, the OOM killer, a crash): exit hooks do not run then, and
// prctl(PR_SET_PDEATHSIG) needs native code and covers one direct child only, not what that child
// starts (`npm start`'s node, the service's embedded Postgres). So each long-lived child is spawned
// as the leader of a process group (and session) of its own, and the group is registered with a
// reaper: a small `sh` at the other end of a pipe from this process. Whatever ends this process,
// the kernel closes the pipe; the reaper reads end-of-file and SIGKILLs every group still
// registered, together with their descendants that moved to a session of their own (the agent's
// tools), found while their parents still live. A group whose leader exited is unregistered
// (Linux reuses pids: this machine's pid_max is 32768), so what a leader leaves behind in its
// group is the test's to see and end, as graceful-shutdown.test.ts does.
// Chromium needs no entry: it exits by itself when the DevTools pipe to playwright closes.
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import type { Writable } from "node:stream";

// Ignores the terminal's signals (Ctrl-C reaches the whole foreground group): it acts on the
// pipe's end only. An entry is a process group ("-<pgid>") or a single process ("<pid>").
// `for t do shift; … set -- "$@" "$t"; done` rewrites the list without one entry.
const REAPER = `
trap "" INT TERM HUP
set --
while read -r op target; do
  case $op in
    add) set -- "$@" "$target" ;;
    del) for t do shift; [ "$t" = "$target" ] || set -- "$@" "$t"; done ;;
  esac
done
tree() { for c in $(pgrep -P "$1" 2>/dev/null); do echo "$c"; tree "$c"; done; }
left=""
for t do
  case $t in -*) members=$(pgrep -g "\${t#-}" 2>/dev/null) ;; *) members=$t ;; esac
  for p in $members; do left="$left $(tree "$p")"; done
done
for t do kill -s KILL -- "$t" 2>/dev/null; done
for p in $left; do kill -s KILL "$p" 2>/dev/null; done
`;

let pipe: Writable | undefined;

/** The reaper's pipe, its process started on first use; neither keeps this process alive. */
function reaper(): Writable {
  if (!pipe) {
    const child = spawn("sh", ["-c", REAPER], { stdio: ["pipe", "ignore", "ignore"] });
    child.unref();
    (child.stdin as unknown as { unref(): void }).unref();
    pipe = child.stdin!;
  }
  return pipe;
}

/**
 * spawn() for a child that runs until the test ends it: in a process group of its own (its pid is
 * the group's id), killed with the group if this process ends first.
 */
export function spawnReaped(command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
  const child = spawn(command, args, { ...options, detached: true });
  const pid = child.pid;
  if (pid === undefined) return child; // not started (ENOENT): its 'error' event says why
  const forget = reap(`-${pid}`);
  child.once("exit", forget);
  return child;
}

/** Kills the running process `pid` (and what it started) if this process ends first; returns the undo. */
export function reapProcess(pid: number): () => void {
  return reap(String(pid));
}

function reap(target: string): () => void {
  reaper().write(`add ${target}\n`);
  return () => reaper().write(`del ${target}\n`);
}
