// Bulk writes that take turns with everyone else, as autovacuum's cost delay does. Before each of its
// statements but the first, a bulk write (a large transaction, a fan-out of many events) rests as long
// as the statement before took, so that on a machine with few cores Postgres and the CPUs are free
// half the time for other callers' requests. The rests of one bulk write add up to at most
// `maxRestMs`, and none is taken past its `restUntil`: on a slow machine, where each statement takes
// longer, a large write is not made twice as long, nor kept from its caller by rests once it has run
// long (bench/notes/2026-11-26-vex-resting-writes.md).
import { setTimeout as delay } from "node:timers/promises";

/** How long a rest is, as a share of the statement before it. */
const REST_RATIO = 1;
/** The rests of one bulk write, in all, at most. */
const MAX_REST_MS = 500;

export interface RestOptions {
  ratio?: number;
  maxRestMs?: number;
  /** No rest reaches past this time (on the `now` clock): from then on the writes follow one another. */
  restUntil?: number;
  /** How it waits and reads the clock (timers and performance.now(), unless a test looks). */
  wait?: (ms: number) => Promise<void>;
  now?: () => number;
}

/** `write`, for one bulk write's statements in turn, resting before each one after the first; each call answers what its write did. */
export function restBetweenWrites<T, R>(
  write: (item: T) => Promise<R>,
  options: RestOptions = {},
): (item: T) => Promise<R> {
  const {
    ratio = REST_RATIO,
    maxRestMs = MAX_REST_MS,
    restUntil = Infinity,
    wait = (ms) => delay(ms),
    now = () => performance.now(),
  } = options;
  let lastTook: number | undefined;
  let rested = 0;
  return async (item) => {
    if (lastTook !== undefined) {
      const rest = Math.round(Math.min(lastTook * ratio, maxRestMs - rested, restUntil - now()));
      if (rest > 0) {
        rested += rest;
        await wait(rest);
      }
    }
    const started = now();
    const result = await write(item);
    lastTook = now() - started;
    return result;
  };
}
