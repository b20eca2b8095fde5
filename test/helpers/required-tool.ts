// A test file that needs a program the machine may lack fails at once, in one line, when it is
// missing: not after a timeout, and never skipped (a skipped test passes nothing).
import { spawnSync } from "node:child_process";

/** An Error that jest reports as its message alone (no stack: the message says everything). */
export function oneLineError(message: string): Error {
  const error = new Error(message);
  error.stack = message;
  return error;
}

/** Throws unless `program --version` runs; call it at the top of the test file that needs it. */
export function requireTool(program: string, debianPackage = program): void {
  const probe = spawnSync(program, ["--version"], { stdio: "ignore" });
  if (probe.error || probe.status !== 0)
    throw oneLineError(`${program} is missing: apt-get install -y ${debianPackage} (.ci/run installs it)`);
}
