// When to retry a webhook delivery, and when to stop (docs/spec/CONTRACT.md §7). Pure: time comes in as arguments.

/** Jitter shortens a delay by up to this fraction, so retries of many deliveries spread out. */
export const RETRY_JITTER = 0.2;

/**
 * Delay before the next attempt, after `attempt` attempts (1-based) have failed: `initialMs`,
 * doubling each time, capped at `maxDelayMs`. Jitter only ever shortens it (to between 80 % and
 * 100 %), so the cap is a true maximum and deliveries that reach the cap still spread out.
 */
export function nextAttemptDelay({
  attempt,
  initialMs,
  maxDelayMs,
  random = Math.random,
}: {
  attempt: number;
  initialMs: number;
  maxDelayMs: number;
  random?: () => number;
}): number {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`attempt must be 1 or more, got ${attempt}`);
  const base = Math.min(maxDelayMs, initialMs * 2 ** (attempt - 1));
  return Math.round(base * (1 - RETRY_JITTER * random()));
}

/**
 * How an attempt failed without an HTTP answer. `forbidden_target`: the SSRF guard refused it.
 * `secret_unavailable`: no configured key opens the subscription's secret, so nothing was sent
 * (retried: putting the key back fixes it).
 */
export type AttemptError = "timeout" | "connection" | "forbidden_target" | "secret_unavailable";

export type AttemptResult = { statusCode: number; error?: undefined } | { statusCode?: undefined; error: AttemptError };

export type DeliveryOutcome =
  { kind: "delivered" } | { kind: "dropped" } | { kind: "retry"; nextAttemptAt: Date } | { kind: "failed" };

export function decideOutcome(
  input: AttemptResult & { firstAttemptAt: Date; now: Date; windowMs: number; nextDelayMs: number },
): DeliveryOutcome {
  const { statusCode, error, firstAttemptAt, now, windowMs, nextDelayMs } = input;
  if (statusCode !== undefined && statusCode >= 200 && statusCode < 300) return { kind: "delivered" };
  // Redirects are not followed, and a 4xx will not change by asking again.
  if (statusCode !== undefined && statusCode >= 300 && statusCode < 500) return { kind: "dropped" };
  // The address policy will not change by asking again either; retrying would only hammer DNS.
  if (error === "forbidden_target") return { kind: "dropped" };

  const nextAttemptAt = new Date(now.getTime() + nextDelayMs);
  const giveUpAt = firstAttemptAt.getTime() + windowMs;
  return nextAttemptAt.getTime() <= giveUpAt ? { kind: "retry", nextAttemptAt } : { kind: "failed" };
}
