// A background worker made of rounds: one every `intervalMs` (and one at start), never two at once,
// none while the database is known to be down (the next tick after it is back); a round's failure is
// logged (a lost connection only by the database's health, once), and stop() waits for the round
// under way, which may read `stopping` to end early.
import type { BackgroundWorker } from "./background-worker.ts";
import type { DatabaseHealth } from "./db/database-health.ts";
import type { Logger } from "./log.ts";

export interface PeriodicRounds extends BackgroundWorker {
  /** True once stop() was called: a round in a loop ends at its next step. */
  readonly stopping: boolean;
}

export function periodicRounds(options: {
  name: string;
  intervalMs: number;
  round: () => Promise<void>;
  log: Logger;
  health?: DatabaseHealth;
  /** What the log says when a round fails. */
  failure: string;
}): PeriodicRounds {
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<unknown> | undefined;
  let stopping = false;

  function tick(): void {
    if (round || stopping) return;
    if (options.health && !options.health.available()) return;
    round = options
      .round()
      .catch((err: unknown) => {
        if (!options.health?.failed(err)) options.log.error({ err }, options.failure);
      })
      .finally(() => {
        round = undefined;
      });
  }

  return {
    name: options.name,
    get stopping() {
      return stopping;
    },
    start() {
      stopping = false;
      timer = setInterval(tick, options.intervalMs);
      timer.unref();
      tick();
    },
    async stop() {
      stopping = true;
      clearInterval(timer);
      await round;
    },
  };
}
