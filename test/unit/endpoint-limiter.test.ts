import {
  createEndpointLimiter,
  endpointSignal,
  type EndpointLimiter,
  type EndpointSignal,
} from "../../src/dispatcher/endpoint-limiter.ts";

const limits = { min: 2, max: 64 };

/** An attempt answered and its outcome written. */
function finish(limiter: EndpointLimiter, key: string, signal: EndpointSignal): void {
  limiter.answered(key, signal);
  limiter.recorded(key);
}

describe("createEndpointLimiter", () => {
  it("starts an endpoint not seen before at the floor, and counts what is in flight", () => {
    const limiter = createEndpointLimiter(limits);
    expect(limiter.available("a")).toBe(2);
    limiter.started("a");
    expect(limiter.available("a")).toBe(1);
    expect(limiter.availability()).toEqual({ keys: ["a"], available: [1], backingOff: [false], otherwise: 2 });
    expect(limiter.available("b")).toBe(2);
  });

  it("climbs by one per healthy answer (doubling per round trip) up to the ceiling", () => {
    const limiter = createEndpointLimiter(limits);
    let roundTrips = 0;
    while (limiter.limitOf("a") < 64) {
      const window = limiter.available("a");
      for (let i = 0; i < window; i++) limiter.started("a");
      for (let i = 0; i < window; i++) finish(limiter, "a", "healthy");
      roundTrips++;
    }
    expect(roundTrips).toBe(5); // 2 → 4 → 8 → 16 → 32 → 64
    limiter.started("a");
    finish(limiter, "a", "healthy");
    expect(limiter.limitOf("a")).toBe(64);
  });

  it("halves on congestion down to the floor and backs off, until a healthy answer", () => {
    const limiter = createEndpointLimiter(limits);
    for (let i = 0; i < 30; i++) {
      limiter.started("a");
      finish(limiter, "a", "healthy");
    }
    expect(limiter.limitOf("a")).toBe(32);
    for (let i = 0; i < 6; i++) limiter.started("a");
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      finish(limiter, "a", "congested");
      seen.push(limiter.limitOf("a"));
    }
    expect(seen).toEqual([16, 8, 4, 2, 2]);
    expect(limiter.availability()).toEqual({ keys: ["a"], available: [1], backingOff: [true], otherwise: 2 });
    finish(limiter, "a", "healthy");
    expect(limiter.availability()).toEqual({ keys: ["a"], available: [3], backingOff: [false], otherwise: 2 });
  });

  it("keeps a failing endpoint even when idle, and forgets a healthy one back at the floor", () => {
    const limiter = createEndpointLimiter(limits);
    limiter.started("a");
    finish(limiter, "a", "congested");
    expect(limiter.availability().keys).toEqual(["a"]);
    limiter.started("b");
    finish(limiter, "b", "healthy");
    expect(limiter.availability().keys).toEqual(["a", "b"]); // b is at 3
    limiter.started("a");
    finish(limiter, "a", "healthy");
    expect(limiter.availability().keys).toEqual(["a", "b"]); // a is at 3 now
    for (const key of ["a", "b"]) {
      limiter.started(key);
      finish(limiter, key, "congested"); // 3 → 2: back at the floor, but failing
    }
    expect(limiter.availability().backingOff).toEqual([true, true]);
  });

  it("bounds what is sent, not what waits to be written, unless the endpoint is failing", () => {
    const limiter = createEndpointLimiter(limits);
    limiter.started("a");
    limiter.started("a");
    limiter.answered("a", "healthy"); // limit 3, 1 in flight, 1 unwritten
    expect(limiter.available("a")).toBe(2);
    limiter.answered("a", "congested"); // limit 2, backing off, 2 unwritten: its retries are not in the database yet
    expect(limiter.available("a")).toBe(0);
    limiter.recorded("a");
    expect(limiter.available("a")).toBe(0);
    limiter.recorded("a");
    expect(limiter.availability()).toEqual({ keys: ["a"], available: [2], backingOff: [true], otherwise: 2 });
  });

  it("refuses limits that cannot hold", () => {
    expect(() => createEndpointLimiter({ min: 0, max: 4 })).toThrow(RangeError);
    expect(() => createEndpointLimiter({ min: 5, max: 4 })).toThrow(RangeError);
  });
});

describe("endpointSignal", () => {
  const timeoutMs = 10_000;
  it.each([
    [{ statusCode: 204, durationMs: 20 }, "healthy"],
    [{ statusCode: 404, durationMs: 20 }, "healthy"],
    [{ statusCode: 302, durationMs: 20 }, "healthy"],
    [{ statusCode: 429, durationMs: 20 }, "congested"],
    [{ statusCode: 503, durationMs: 20 }, "congested"],
    [{ statusCode: 200, durationMs: 5_001 }, "congested"],
    [{ error: "timeout", durationMs: 10_000 }, "congested"],
    [{ error: "connection", durationMs: 3 }, "congested"],
    [{ error: "forbidden_target", durationMs: 0 }, "healthy"],
  ] as const)("%o is %s", (result, expected) => {
    expect(endpointSignal(result, timeoutMs)).toBe(expected);
  });
});
