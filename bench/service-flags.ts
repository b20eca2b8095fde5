// Node flags for the service processes the suites start: those of `npm start` (START_FLAGS), then
// BENCH_SERVICE_FLAGS, e.g. `--max-old-space-size=160` (does it fit in that heap?) or V8 flags
// NODE_OPTIONS does not take. Later flags win.
import { START_FLAGS } from "../test/helpers/service-process.ts";

/** BENCH_SERVICE_FLAGS alone, for startServiceProcess, which puts START_FLAGS first itself. */
export const extraServiceFlags = (): string[] => process.env.BENCH_SERVICE_FLAGS?.split(/\s+/).filter(Boolean) ?? [];

export const serviceFlags = (): string[] => [...START_FLAGS, ...extraServiceFlags()];
