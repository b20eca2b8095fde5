// How many attempts may be in flight to one subscription's endpoint at once, adapted to how it
// answers (additive increase, multiplicative decrease, as TCP does): a healthy endpoint climbs to the
// maximum within a few dozen answers, so bursts drain at the speed of the wire, while one that times
// out, refuses, fails or answers slowly is cut back to the floor, so it holds only a small share of
// the instance's slots and cannot starve the others. Pure bookkeeping: no I/O, no clock.

export type EndpointSignal =
  /** A timely answer: 2xx, and also 3xx/4xx, which say nothing about the endpoint's capacity. */
  | "healthy"
  /** A timeout, a refused or reset connection, a 5xx, a 429, or an answer slower than the slow threshold. */
  | "congested";

export interface EndpointLimits {
  /** Ceiling per endpoint. */
  max: number;
  /** Floor per endpoint: even a failing endpoint gets this many, so its retries go out on time. */
  min: number;
  /** Where an endpoint not seen before starts. */
  initial: number;
}

interface EndpointState {
  limit: number;
  inFlight: number;
}

export interface EndpointLimiter {
  /** Attempts this endpoint may still start now. */
  available(key: string): number;
  /** Free attempts of every endpoint tracked, and of any other (`otherwise`). */
  availability(): { keys: string[]; available: number[]; otherwise: number };
  started(key: string): void;
  finished(key: string, signal: EndpointSignal): void;
  limitOf(key: string): number;
}

export function createEndpointLimiter(limits: EndpointLimits): EndpointLimiter {
  const { max, min } = limits;
  if (!(min >= 1 && min <= max)) throw new RangeError(`endpoint limits need 1 <= min <= max, got min ${min}, max ${max}`);
  const initial = Math.min(max, Math.max(min, limits.initial));
  const states = new Map<string, EndpointState>();

  const stateOf = (key: string): EndpointState => {
    let state = states.get(key);
    if (!state) states.set(key, (state = { limit: initial, inFlight: 0 }));
    return state;
  };

  return {
    available(key) {
      const state = states.get(key);
      return state ? Math.max(0, state.limit - state.inFlight) : initial;
    },
    availability() {
      const keys: string[] = [];
      const available: number[] = [];
      for (const [key, state] of states) {
        keys.push(key);
        available.push(Math.max(0, state.limit - state.inFlight));
      }
      return { keys, available, otherwise: initial };
    },
    started(key) {
      stateOf(key).inFlight++;
    },
    finished(key, signal) {
      const state = stateOf(key);
      state.inFlight = Math.max(0, state.inFlight - 1);
      state.limit = signal === "healthy" ? Math.min(max, state.limit + 1) : Math.max(min, Math.floor(state.limit / 2));
      // An idle endpoint back at the starting point needs no entry: the map stays as small as the
      // set of endpoints that are busy or recovering.
      if (state.inFlight === 0 && state.limit === initial) states.delete(key);
    },
    limitOf(key) {
      return states.get(key)?.limit ?? initial;
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
  if (result.error === "forbidden_target") return "healthy"; // refused here; nothing was asked of it
  if (result.statusCode === undefined) return "congested";
  if (result.statusCode >= 500 || result.statusCode === 429) return "congested";
  return result.durationMs > timeoutMs / 2 ? "congested" : "healthy";
}
