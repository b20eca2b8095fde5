import { decideOutcome, nextAttemptDelay, type AttemptResult } from "../../src/dispatcher/retry-policy.ts";

const policy = { initialMs: 10_000, maxDelayMs: 3_600_000 };
const noJitter = () => 0;
const fullJitter = () => 0.999_999;

describe("nextAttemptDelay", () => {
  it("starts at the initial delay and doubles up to the cap", () => {
    const delays = Array.from({ length: 12 }, (_, i) =>
      nextAttemptDelay({ ...policy, attempt: i + 1, random: noJitter }),
    );
    expect(delays).toEqual([
      10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 640_000, 1_280_000, 2_560_000, 3_600_000, 3_600_000, 3_600_000,
    ]);
  });

  it("shortens each delay by at most 20 % of jitter", () => {
    expect(nextAttemptDelay({ ...policy, attempt: 1, random: fullJitter })).toBe(8_000);
    expect(nextAttemptDelay({ ...policy, attempt: 3, random: () => 0.5 })).toBe(36_000);
    expect(nextAttemptDelay({ ...policy, attempt: 20, random: fullJitter })).toBe(2_880_001);
  });

  it("stays within [80 %, 100 %] of the schedule with Math.random", () => {
    for (let attempt = 1; attempt <= 15; attempt++) {
      const base = Math.min(policy.maxDelayMs, policy.initialMs * 2 ** (attempt - 1));
      for (let i = 0; i < 50; i++) {
        const delay = nextAttemptDelay({ ...policy, attempt });
        expect(delay).toBeGreaterThanOrEqual(base * 0.8);
        expect(delay).toBeLessThanOrEqual(base);
      }
    }
  });

  it("stays capped after very many attempts", () => {
    expect(nextAttemptDelay({ ...policy, attempt: 5000, random: noJitter })).toBe(3_600_000);
  });

  it.each([0, -1, 1.5, Number.NaN])("rejects attempt %p", (attempt) => {
    expect(() => nextAttemptDelay({ ...policy, attempt })).toThrow(RangeError);
  });
});

describe("decideOutcome", () => {
  const firstAttemptAt = new Date("2025-01-01T00:00:00Z");
  const window = { firstAttemptAt, windowMs: 24 * 3_600_000 };
  const decide = (result: AttemptResult, nowOffsetMs = 0, nextDelayMs = 10_000) =>
    decideOutcome({ ...result, ...window, now: new Date(firstAttemptAt.getTime() + nowOffsetMs), nextDelayMs });

  it.each([200, 201, 202, 204, 299])("counts %i as delivered", (statusCode) => {
    expect(decide({ statusCode })).toEqual({ kind: "delivered" });
  });

  it.each([300, 301, 302, 304, 307, 308, 400, 401, 404, 410, 413, 429, 499])("drops on %i", (statusCode) => {
    expect(decide({ statusCode })).toEqual({ kind: "dropped" });
  });

  it("drops a delivery the SSRF guard refused", () => {
    expect(decide({ error: "forbidden_target" })).toEqual({ kind: "dropped" });
  });

  const retryable: AttemptResult[] = [
    { statusCode: 500 },
    { statusCode: 502 },
    { statusCode: 503 },
    { error: "timeout" },
    { error: "connection" },
  ];
  it.each(retryable)("retries after %p, at now + the delay", (result) => {
    expect(decide(result, 60_000, 20_000)).toEqual({ kind: "retry", nextAttemptAt: new Date("2025-01-01T00:01:20Z") });
  });

  it("retries while the next attempt falls within the window, then gives up", () => {
    const hour = 3_600_000;
    expect(decide({ statusCode: 503 }, 23 * hour, hour)).toEqual({
      kind: "retry",
      nextAttemptAt: new Date("2025-01-02T00:00:00Z"),
    });
    expect(decide({ statusCode: 503 }, 23 * hour, hour + 1)).toEqual({ kind: "failed" });
    expect(decide({ error: "timeout" }, 24 * hour, 10_000)).toEqual({ kind: "failed" });
  });

  it("still records a success or a drop after the window", () => {
    expect(decide({ statusCode: 200 }, 48 * 3_600_000)).toEqual({ kind: "delivered" });
    expect(decide({ statusCode: 404 }, 48 * 3_600_000)).toEqual({ kind: "dropped" });
  });
});
