// The SSRF guard's scan-target policy (docs/spec/CONTRACT.md §12): like webhooks' (test/unit/ssrf-guard.test.ts),
// plus SCAN_TARGET_ALLOW's hosts and CIDR networks, which private addresses may be reached all the same.
import type { LookupAddress } from "node:dns";
import {
  createGuardedLookup,
  ForbiddenTargetError,
  isRefusedTarget,
  literalHostRefusal,
  type ResolveAll,
  type TargetPolicy,
} from "../../src/net/ssrf-guard.ts";
import { TargetAllowList } from "../../src/net/target-allow-list.ts";

const policy = (allow: string, allowPrivateTargets = false): TargetPolicy => ({
  allowPrivateTargets,
  allowList: TargetAllowList.parse(allow),
});

describe("TargetAllowList", () => {
  it("reads hosts, wildcard hosts, addresses and CIDR networks of both families", () => {
    const list = TargetAllowList.parse(" staging.internal , *.corp.example,10.20.0.0/16, 192.168.1.7 ,fd00::/8,::1");
    expect(list.entries).toEqual([
      "staging.internal",
      "*.corp.example",
      "10.20.0.0/16",
      "192.168.1.7",
      "fd00::/8",
      "::1",
    ]);
    expect(
      ["staging.internal", "STAGING.internal.", "a.corp.example", "a.b.corp.example"].map((h) => list.allowsHost(h)),
    ).toEqual([true, true, true, true]);
    expect(
      ["corp.example", "staging.internal.evil.example", "evilcorp.example"].map((h) => list.allowsHost(h)),
    ).toEqual([false, false, false]);
    expect(
      ["10.20.255.1", "192.168.1.7", "fd12::1", "::1", "::ffff:10.20.0.9", "fe80::1%eth0"].map((a) =>
        list.allowsAddress(a),
      ),
    ).toEqual([true, true, true, true, true, false]);
    expect(["10.21.0.1", "192.168.1.8", "fe80::1", "staging.internal"].map((a) => list.allowsAddress(a))).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });

  it.each([
    ["10.0.0.0/33", '"10.0.0.0/33" has no valid prefix length (0-32)'],
    ["fd00::/129", '"fd00::/129" has no valid prefix length (0-128)'],
    ["10.0.0.0/x", '"10.0.0.0/x" has no valid prefix length (0-32)'],
    ["https://staging.internal", '"https://staging.internal" is neither a host name, an IP address nor a CIDR network'],
    ["staging.internal/8", '"staging.internal/8" is neither a host name, an IP address nor a CIDR network'],
    ["bad host!", '"bad host!" is neither a host name, an IP address nor a CIDR network'],
    ["10.0.0.1/8/8", '"10.0.0.1/8/8" is neither a host name, an IP address nor a CIDR network'],
  ])("refuses %s", (text, message) => {
    expect(() => TargetAllowList.parse(text)).toThrow(message);
  });
});

describe("the scan-target policy", () => {
  it("refuses non-public addresses unless allowed outright, by host or by network", () => {
    expect(isRefusedTarget({ allowPrivateTargets: false }, "app.test", "10.20.0.5")).toBe(true);
    expect(isRefusedTarget({ allowPrivateTargets: true }, "app.test", "10.20.0.5")).toBe(false);
    expect(isRefusedTarget(policy("10.20.0.0/16"), "app.test", "10.20.0.5")).toBe(false);
    expect(isRefusedTarget(policy("10.20.0.0/16"), "app.test", "10.21.0.5")).toBe(true);
    expect(isRefusedTarget(policy("app.test"), "app.test", "10.21.0.5")).toBe(false);
    expect(isRefusedTarget(policy("app.test"), "other.test", "10.21.0.5")).toBe(true);
    expect(isRefusedTarget(policy("app.test"), "other.test", "93.184.216.34")).toBe(false); // public: always
    expect(isRefusedTarget(policy("127.0.0.1/32"), "localhost", "::1")).toBe(true); // the other family is not listed
  });

  it("checks literal hosts before any lookup: localhost names and private literals, with the allow-list", () => {
    const url = (u: string) => new URL(u);
    expect(literalHostRefusal(url("http://10.20.0.5:8080/"), { allowPrivateTargets: false })).toMatch(
      /non-public address/,
    );
    expect(literalHostRefusal(url("http://10.20.0.5:8080/"), policy("10.20.0.0/16"))).toBeNull();
    expect(literalHostRefusal(url("http://[fd00::5]/"), policy("fd00::/8"))).toBeNull();
    expect(literalHostRefusal(url("http://localhost:3000/"), { allowPrivateTargets: false })).toBe(
      "must not point to localhost",
    );
    expect(literalHostRefusal(url("http://localhost:3000/"), policy("localhost"))).toBeNull();
    expect(literalHostRefusal(url("http://app.internal/"), { allowPrivateTargets: false })).toBeNull(); // names wait for DNS
  });

  const resolvingTo =
    (...addresses: string[]): ResolveAll =>
    (_hostname, _options, callback) =>
      callback(
        null,
        addresses.map((address): LookupAddress => ({ address, family: address.includes(":") ? 6 : 4 })),
      );
  const lookup = (p: TargetPolicy, hostname: string, resolveAll: ResolveAll) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
      createGuardedLookup({ ...p, resolveAll })(hostname, { all: false }, (err, address) => resolve({ err, address })),
    );

  it("applies the allow-list after DNS, to every address a name resolves to", async () => {
    expect(await lookup(policy("10.20.0.0/16"), "app.test", resolvingTo("10.20.0.5"))).toEqual({
      err: null,
      address: "10.20.0.5",
    });
    const mixed = await lookup(policy("10.20.0.0/16"), "app.test", resolvingTo("10.20.0.5", "10.99.0.5"));
    expect(mixed.err).toBeInstanceOf(ForbiddenTargetError);
    expect(mixed.err?.message).toBe(
      "Refusing to connect to app.test: it resolves to 10.99.0.5, which is not a public address",
    );
    expect(await lookup(policy("*.internal"), "db.internal", resolvingTo("10.99.0.5", "fd00::5"))).toEqual({
      err: null,
      address: "10.99.0.5",
    });
    expect((await lookup(policy("*.internal"), "db.external", resolvingTo("10.99.0.5"))).err?.code).toBe("ESSRF");
  });
});
