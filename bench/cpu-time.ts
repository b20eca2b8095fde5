// CPU time of processes, from /proc (Linux): where a scenario's CPU went, per delivery. Where /proc
// is not there, every figure is NaN and the harness prints none.
import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

function ticksOf(pid: number, withReapedChildren = false): number {
  try {
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15,
    // and the reaped children's cutime 16, cstime 17.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const own = Number(fields[11]) + Number(fields[12]);
    return withReapedChildren ? own + Number(fields[13]) + Number(fields[14]) : own;
  } catch {
    return NaN;
  }
}

function pidsNamed(name: string): number[] {
  try {
    return readdirSync("/proc")
      .filter((entry) => /^\d+$/.test(entry))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === name;
        } catch {
          return false;
        }
      })
      .map(Number);
  } catch {
    return [];
  }
}

/**
 * CPU seconds used so far by these processes, and by every process called `name` (e.g. postgres)
 * with the children it has reaped: a backend that exits between two readings is gone from /proc,
 * but its time has moved to the postmaster's, so the difference never goes negative.
 */
export function cpuSeconds(pids: number[], name?: string): number {
  const own = pids.reduce((sum, pid) => sum + ticksOf(pid), 0);
  const named = name ? pidsNamed(name).reduce((sum, pid) => sum + ticksOf(pid, true), 0) : 0;
  return (own + named) / TICKS_PER_SECOND;
}
