// Resident memory of a process from /proc (Linux): its peak so far (VmHWM) and now (VmRSS), in MiB.
import { readFile } from "node:fs/promises";

export async function memoryOf(pid: number): Promise<{ peak: number; now: number }> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0);
  return { peak: Math.round(kib("VmHWM") / 1024), now: Math.round(kib("VmRSS") / 1024) };
}
