// A command executor: an argv array run with {source} (a shallow clone of the application's
// repository), {serviceUrl} and {report} (the file the tool writes; without it, what the tool
// prints on stdout is the report) put in, in a process group of its own, bounded by its timeout.
// A report present means the tool finished, whatever its exit code: many scanners exit non-zero
// when they find something.
import { open, stat } from "node:fs/promises";
import path from "node:path";
import type { CommandExecutorConfig, Placeholder } from "./agent-config.ts";
import type { Executor, ExecutorOutcome, Job } from "./executor.ts";
import { shallowClone } from "./git-clone.ts";
import { runInProcessGroup, type GroupRun } from "./process-group.ts";

const uses = (argv: readonly string[], placeholder: Placeholder) =>
  argv.some((arg) => arg.includes(`{${placeholder}}`));

const fill = (argv: readonly string[], values: Partial<Record<Placeholder, string>>) =>
  argv.map((arg) =>
    arg.replace(/\{(source|serviceUrl|report)\}/g, (whole, name: Placeholder) => values[name] ?? whole),
  );

async function nonEmptyFile(file: string): Promise<boolean> {
  return stat(file).then(
    (s) => s.isFile() && s.size > 0,
    () => false,
  );
}

class Aborted extends Error {
  constructor() {
    super("aborted");
    this.name = "AbortError";
  }
}

function failureOf(program: string, run: GroupRun, timeoutSeconds: number): string {
  const head = run.spawnError
    ? `Could not run ${program}: ${run.spawnError.message}`
    : run.timedOut
      ? `${program} timed out after ${timeoutSeconds} s (its process group was killed)`
      : `${program} ${run.code === null ? `was ended by ${run.signal}` : `exited with code ${run.code}`} without writing a report`;
  return run.stderrTail ? `${head}:\n${run.stderrTail}` : head;
}

export function commandExecutor(config: CommandExecutorConfig, env: NodeJS.ProcessEnv): Executor {
  const program = config.command[0]!;
  const timeoutMs = config.timeoutSeconds * 1000;
  const writesReportFile = uses(config.command, "report");
  return {
    description: config.command.join(" "),
    async run(job: Job, workDir: string, signal: AbortSignal): Promise<ExecutorOutcome> {
      const values: Partial<Record<Placeholder, string>> = { report: path.join(workDir, "report.json") };
      const deadline = Date.now() + timeoutMs;
      if (uses(config.command, "serviceUrl")) {
        if (!job.application.serviceUrl)
          return {
            kind: "failed",
            reason: `The application has no serviceUrl for {serviceUrl} in: ${this.description}`,
          };
        values.serviceUrl = job.application.serviceUrl;
      }
      if (uses(config.command, "source")) {
        if (!job.application.repoUrl)
          return {
            kind: "failed",
            reason: `The application has no repoUrl to clone for {source} in: ${this.description}`,
          };
        values.source = path.join(workDir, "source");
        const cloned = await shallowClone(job.application.repoUrl, values.source, {
          cwd: workDir,
          env,
          timeoutMs,
          signal,
        });
        if (signal.aborted) throw new Aborted();
        if (!cloned.ok) return { kind: "failed", reason: cloned.reason };
      }

      const argv = fill(config.command, values);
      const stdout = writesReportFile ? undefined : await open(values.report!, "w");
      let run: GroupRun;
      try {
        run = await runInProcessGroup(argv[0]!, argv.slice(1), {
          cwd: values.source ?? workDir,
          env,
          timeoutMs: Math.max(deadline - Date.now(), 1),
          signal,
          stdoutFd: stdout?.fd,
        });
      } finally {
        await stdout?.close();
      }
      if (run.aborted) throw new Aborted();
      if (!run.timedOut && !run.spawnError && (await nonEmptyFile(values.report!))) {
        return { kind: "report", path: values.report!, format: config.format, checkoutPath: values.source };
      }
      return { kind: "failed", reason: failureOf(program, run, config.timeoutSeconds) };
    },
  };
}
