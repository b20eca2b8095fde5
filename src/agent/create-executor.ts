// The executor of each configured kind: a command the agent runs, or the built-in DAST baseline.
import type { ExecutorConfig } from "./agent-config.ts";
import { baselineExecutor } from "./baseline-executor.ts";
import { commandExecutor } from "./command-executor.ts";
import type { Executor } from "./executor.ts";

/** Environment of the tools the agent runs: its own, less the agent's token. */
export function toolEnvironment(): NodeJS.ProcessEnv {
  const { APPSEC_TOKEN: _token, ...env } = process.env;
  return env;
}

export function createExecutor(config: ExecutorConfig): Executor {
  return "command" in config ? commandExecutor(config, toolEnvironment()) : baselineExecutor(config);
}
