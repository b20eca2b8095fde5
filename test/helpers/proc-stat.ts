// A field of a Linux stat line (proc(5)): a process's, /proc/<pid>/stat, or one of its threads',
// /proc/<pid>/task/<tid>/stat.
import { readFileSync } from "node:fs";

/**
 * Field `n` of the stat line at `path`, counted from 1 as proc(5) does. The command's name (field 2)
 * is in parentheses and may hold spaces: the fields are counted on from its closing one.
 */
export function procStatField(path: string, n: number): number {
  const line = readFileSync(path, "utf8");
  return Number(line.slice(line.lastIndexOf(")") + 2).split(" ")[n - 3]);
}
