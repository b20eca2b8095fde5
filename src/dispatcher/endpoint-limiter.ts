// How many attempts may be in flight to one subscription's endpoint at once, adapted to how it
// answers, as TCP adapts its window: an endpoint starts at the floor and every timely answer adds one
// (so a healthy endpoint doubles its share each round trip and reaches the ceiling within a few),
// while a timeout, a refused connection, a 5xx, a 429 or a slow answer halves it, down to the floor.
// A failing endpoint thus holds only a small share of the instance's slots and cannot starve the
// others. While its last answer was a failure it is also "backing off": it is sent its due retries
// and no fresh delivery while any retry is pending, so the deliveries already failing are retried on
// their schedule instead of queueing behind new ones. Pure bookkeeping: no I/O, no clock.

export type EndpointSignal =
  /** A timely answer: 2xx, and also 3xx/4xx, which say nothing about the endpoint's capacity. */
  | "healthy"
  /** A timeout, a refused or reset connection, a 5xx, a 429, or an answer slower than the slow threshold. */
  | "congested";

export interface EndpointLimits {
  /** Ceiling per endpoint. */
  max: number;
  /** Floor per endpoint, and where an endpoint not seen before starts. */
  min: number;
}

interface EndpointState {
  limit: number;
  /** Attempts sent and not yet answered: what the limit bounds. */
  inFlight: number;
  /** Attempts answered whose outcome is not yet written. */
  unrecorded: number;
  backingOff: boolean;
}

/**
 * An attempt is `started`, then `answered` (its request is over: the limit adapts), then
 * `recorded` (its outcome is written).
 */
export interface EndpointLimiter {
  /** Attempts this endpoint may still start now. */
  available(key: string): number;
  /** Free attempts of every endpoint tracked and whether it is backing off, and the free attempts of any other. */
  availability(): { keys: string[]; available: number[]; backingOff: boolean[]; otherwise: number };
  started(key: string): void;
  answered(key: string, signal: EndpointSignal): void;
  recorded(key: string): void;
  limitOf(key: string): number;
}

export function createEndpointLimiter(limits: EndpointLimits): EndpointLimiter {
  const { max, min } = limits;
  if (!(min >= 1 && min <= max))
    throw new RangeError(`endpoint limits need 1 <= min <= max, got min ${min}, max ${max}`);
  const states = new Map<string, EndpointState>();

  const stateOf = (key: string): EndpointState => {
    let state = states.get(key);
    if (!state) states.set(key, (state = { limit: min, inFlight: 0, unrecorded: 0, backingOff: false }));
    return state;
  };
  // A failing endpoint waits until its failures are written: they are the retries that must go
  // before any fresh delivery, and a claim made earlier would not see them yet.
  const free = (state: EndpointState) =>
    state.backingOff && state.unrecorded > 0 ? 0 : Math.max(0, state.limit - state.inFlight);
  // An idle, healthy endpoint back at the starting point needs no entry: the map stays as small as
  // the set of endpoints that are busy, failing or recovering.
  const forgetIfIdle = (key: string, state: EndpointState) => {
    if (state.inFlight === 0 && state.unrecorded === 0 && state.limit === min && !state.backingOff) states.delete(key);
  };

  return {
    available(key) {
      const state = states.get(key);
      return state ? free(state) : min;
    },
    availability() {
      const keys: string[] = [];
      const available: number[] = [];
      const backingOff: boolean[] = [];
      for (const [key, state] of states) {
        keys.push(key);
        available.push(free(state));
        backingOff.push(state.backingOff);
      }
      return { keys, available, backingOff, otherwise: min };
    },
    started(key) {
      stateOf(key).inFlight++;
    },
    answered(key, signal) {
      const state = stateOf(key);
      state.inFlight = Math.max(0, state.inFlight - 1);
      state.unrecorded++;
      const healthy = signal === "healthy";
      state.limit = healthy ? Math.min(max, state.limit + 1) : Math.max(min, Math.floor(state.limit / 2));
      state.backingOff = !healthy;
    },
    recorded(key) {
      const state = stateOf(key);
      state.unrecorded = Math.max(0, state.unrecorded - 1);
      forgetIfIdle(key, state);
    },
    limitOf(key) {
      return states.get(key)?.limit ?? min;
    },
  };
}

/**
 * What an attempt says of its endpoint's capacity. An answer that took more than half the timeout
 * counts as congestion too: such an endpoint holds slots for long, so it gets fewer of them.
 */
export function endpointSignal(
  result: { statusCode?: number; error?: string; durationMs: number },
  timeoutMs: number,
): EndpointSignal {
  // Refused or unsigned here: nothing was asked of the endpoint.
  if (result.error === "forbidden_target" || result.error === "secret_unavailable") return "healthy";
  if (result.statusCode === undefined) return "congested";
  if (result.statusCode >= 500 || result.statusCode === 429) return "congested";
  return result.durationMs > timeoutMs / 2 ? "congested" : "healthy";
}
