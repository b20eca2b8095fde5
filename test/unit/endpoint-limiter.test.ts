import { createEndpointLimiter, endpointSignal } from "../../src/dispatcher/endpoint-limiter.ts";

const limits = { min: 2, max: 64, initial: 8 };

describe("createEndpointLimiter", () => {
  it("gives an endpoint not seen before the initial allowance, and counts what is in flight", () => {
    const limiter = createEndpointLimiter(limits);
    expect(limiter.available("a")).toBe(8);
    for (let i = 0; i < 3; i++) limiter.started("a");
    expect(limiter.available("a")).toBe(5);
    expect(limiter.availability()).toEqual({ keys: ["a"], available: [5], otherwise: 8 });
    expect(limiter.available("b")).toBe(8);
  });

  it("climbs by one per healthy answer up to the ceiling", () => {
    const limiter = createEndpointLimiter(limits);
    for (let i = 0; i < 100; i++) {
      limiter.started("a");
      limiter.finished("a", "healthy");
      expect(limiter.limitOf("a")).toBe(Math.min(64, 9 + i));
    }
    expect(limiter.available("a")).toBe(64);
  });

  it("halves on congestion down to the floor, and recovers with healthy answers", () => {
    const limiter = createEndpointLimiter(limits);
    for (let i = 0; i < 8; i++) limiter.started("a");
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      limiter.finished("a", "congested");
      seen.push(limiter.limitOf("a"));
    }
    expect(seen).toEqual([4, 2, 2, 2, 2]);
    expect(limiter.available("a")).toBe(0); // 3 still in flight, limit 2
    for (let i = 0; i < 3; i++) limiter.finished("a", "healthy");
    expect(limiter.limitOf("a")).toBe(5);
    expect(limiter.available("a")).toBe(5);
  });

  it("forgets an idle endpoint back at the starting point, and keeps a recovering one", () => {
    const limiter = createEndpointLimiter(limits);
    limiter.started("a");
    limiter.finished("a", "congested");
    expect(limiter.availability().keys).toEqual(["a"]);
    for (let i = 0; i < 4; i++) {
      limiter.started("a");
      limiter.finished("a", "healthy");
    }
    expect(limiter.limitOf("a")).toBe(8);
    expect(limiter.availability().keys).toEqual([]);
  });

  it("refuses limits that cannot hold", () => {
    expect(() => createEndpointLimiter({ min: 0, max: 4, initial: 1 })).toThrow(RangeError);
    expect(() => createEndpointLimiter({ min: 5, max: 4, initial: 4 })).toThrow(RangeError);
    expect(createEndpointLimiter({ min: 1, max: 4, initial: 100 }).available("x")).toBe(4);
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
