// Live subscribers first. A replay hands its events on in slices of the event loop. Between slices it
// lets the loop turn at once, unless live events have reached this instance's subscribers lately: then
// the replays of the instance, together, take at most a seventh of the loop (and their clients and
// Postgres a like share of the CPUs), resting between slices. Alone they run flat out.
import { setTimeout as delay } from "node:timers/promises";

/** Live events this recent make replays rest between slices. */
export const LIVE_WINDOW_MS = 1_000;
/**
 * The share of the event loop the replays of an instance take while live events are flowing: they
 * rest six times as long as their slices took. With a quarter, the live subscribers' p99 beside a
 * catch-up was 1.27–1.79× its value alone on two CPUs; with a seventh 1.08–1.17× in the same
 * session's alternated runs, the catch-up still at 11,000–16,000 events/s
 * (bench/notes/2026-11-28-replay-share.md).
 */
export const REPLAY_SHARE = 1 / 7;

/** Lets the loop turn after a slice of replay that kept it busy `busyMs`. */
export type ReplayRest = (busyMs: number) => Promise<void>;

export const turnAtOnce: ReplayRest = () => new Promise((resolve) => setImmediate(resolve));

/**
 * One rest for all the replays of an instance, whose live subscribers last got an event at
 * `lastLiveAt()` (performance.now()); `wait` is how it waits and `clock` what time it is (timers
 * and performance.now(), unless a test looks).
 */
export function restBesideLive(
  lastLiveAt: () => number,
  wait: (ms: number) => Promise<void> = (ms) => delay(ms),
  clock: () => number = () => performance.now(),
): ReplayRest {
  /** When the replays have rested long enough for the slices they have run. */
  let rested = 0;
  return (busyMs) => {
    const now = clock();
    if (now - lastLiveAt() > LIVE_WINDOW_MS) return turnAtOnce(busyMs);
    rested = Math.max(rested, now) + busyMs * (1 / REPLAY_SHARE - 1);
    return wait(Math.ceil(rested - now)); // timers truncate fractions
  };
}
