import type { Actor } from "../../src/auth/scopes.ts";
import { createVerifiedTokens } from "../../src/auth/verified-tokens.ts";

const T0 = 1_800_000_000_000; // ms
const actor = (expSeconds: number, sub = "alice"): Actor => ({
  sub,
  scopes: new Set(["admin"]),
  exp: expSeconds,
  teams: null,
  orgWide: true,
});

describe("verified tokens", () => {
  let clock = T0;
  const tokens = () => createVerifiedTokens({ maxEntries: 3, maxAgeMs: 60_000, skewSeconds: 30, now: () => clock });
  beforeEach(() => (clock = T0));

  it("answers a token verified before, for at most maxAgeMs", () => {
    const cache = tokens();
    const a = actor(T0 / 1000 + 3600);
    cache.set("t1", a);
    expect(cache.get("t1")).toBe(a);
    expect(cache.get("t2")).toBeUndefined();
    clock = T0 + 59_999;
    expect(cache.get("t1")).toBe(a);
    clock = T0 + 60_000;
    expect(cache.get("t1")).toBeUndefined();
  });

  it("never past exp plus the clock skew, as jose would refuse it then", () => {
    const cache = tokens();
    cache.set("t1", actor(T0 / 1000 + 5));
    clock = T0 + 34_999;
    expect(cache.get("t1")).toBeDefined();
    clock = T0 + 35_000;
    expect(cache.get("t1")).toBeUndefined();
  });

  it("keeps at most maxEntries, dropping the oldest first", () => {
    const cache = tokens();
    const exp = T0 / 1000 + 3600;
    for (const t of ["t1", "t2", "t3", "t4"]) cache.set(t, actor(exp, t));
    expect(cache.get("t1")).toBeUndefined();
    expect(["t2", "t3", "t4"].map((t) => cache.get(t)?.sub)).toEqual(["t2", "t3", "t4"]);
  });
});
