import type { LookupAddress } from "node:dns";
import { createServer } from "node:net";
import { Agent, request } from "undici";
import {
  checkWebhookUrl,
  createGuardedLookup,
  ForbiddenTargetError,
  isForbiddenAddress,
  type ResolveAll,
} from "../../src/net/ssrf-guard.ts";

describe("isForbiddenAddress", () => {
  it.each([
    ["IPv4 unspecified", "0.0.0.0"],
    ["IPv4 this-network", "0.1.2.3"],
    ["IPv4 private 10/8", "10.1.2.3"],
    ["IPv4 CGNAT", "100.64.0.1"],
    ["IPv4 CGNAT, top", "100.127.255.255"],
    ["IPv4 loopback", "127.0.0.1"],
    ["IPv4 loopback, elsewhere in 127/8", "127.255.255.254"],
    ["IPv4 link-local (cloud metadata)", "169.254.169.254"],
    ["IPv4 private 172.16/12", "172.16.0.1"],
    ["IPv4 private 172.16/12, top", "172.31.255.255"],
    ["IPv4 IETF protocol assignments", "192.0.0.8"],
    ["IPv4 documentation", "192.0.2.1"],
    ["IPv4 private 192.168/16", "192.168.1.1"],
    ["IPv4 benchmarking", "198.19.255.1"],
    ["IPv4 documentation", "203.0.113.5"],
    ["IPv4 multicast", "224.0.0.1"],
    ["IPv4 multicast, top", "239.255.255.250"],
    ["IPv4 reserved", "240.0.0.1"],
    ["IPv4 broadcast", "255.255.255.255"],
    ["IPv6 unspecified", "::"],
    ["IPv6 loopback", "::1"],
    ["IPv6 loopback, long form", "0:0:0:0:0:0:0:1"],
    ["IPv6 unique local", "fc00::1"],
    ["IPv6 unique local fd", "fd12:3456:789a::1"],
    ["IPv6 link-local", "fe80::1"],
    ["IPv6 link-local with zone", "fe80::1%eth0"],
    ["IPv6 link-local, top", "febf:ffff::1"],
    ["IPv6 site-local", "fec0::1"],
    ["IPv6 multicast", "ff02::1"],
    ["IPv6 documentation", "2001:db8::1"],
    ["IPv6 discard-only", "100::1"],
    ["IPv4-mapped loopback, dotted", "::ffff:127.0.0.1"],
    ["IPv4-mapped loopback, hex", "::ffff:7f00:1"],
    ["IPv4-mapped private", "::ffff:10.0.0.1"],
    ["IPv4-mapped link-local", "::ffff:a9fe:a9fe"],
    ["IPv4-mapped, long form", "0:0:0:0:0:ffff:c0a8:0101"],
    ["IPv4-compatible (deprecated)", "::127.0.0.1"],
    ["IPv4-compatible public (deprecated, never routable)", "::93.184.216.34"],
    ["NAT64 of private", "64:ff9b::10.0.0.1"],
    ["NAT64 of loopback, hex", "64:ff9b::7f00:1"],
    ["local-use NAT64", "64:ff9b:1::5db8:d822"],
    ["6to4 of loopback", "2002:7f00:1::1"],
    ["6to4 of private", "2002:c0a8:101::"],
    ["Teredo with a loopback client", "2001:0:4136:e378:8000:63bf:80ff:fffe"],
    ["not an address", "example.com"],
    ["empty", ""],
  ])("refuses %s: %s", (_, address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each([
    ["public IPv4", "93.184.216.34"],
    ["public IPv4", "8.8.8.8"],
    ["just after 172.16/12", "172.32.0.1"],
    ["just after CGNAT", "100.128.0.1"],
    ["just before 10/8", "9.255.255.255"],
    ["just after 192.168/16", "192.169.0.1"],
    ["public IPv6", "2606:4700::1111"],
    ["public IPv6", "2001:4860:4860::8888"],
    ["IPv4-mapped public", "::ffff:93.184.216.34"],
    ["NAT64 of public", "64:ff9b::5db8:d822"],
    ["6to4 of public", "2002:5db8:d822::1"],
    ["Teredo with a public client", "2001:0:4136:e378:8000:63bf:a247:2bdd"],
  ])("allows %s: %s", (_, address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });
});

describe("checkWebhookUrl", () => {
  const strict = { allowPrivateTargets: false };
  const lenient = { allowPrivateTargets: true };

  it.each(["https://example.com/hooks", "https://93.184.216.34:8443/h?x=1", "https://[2606:4700::1111]/h"])(
    "accepts %s",
    (url) => {
      expect(checkWebhookUrl(url, strict)).toBeNull();
    },
  );

  it.each([
    ["not a url", "url must be a valid absolute URL"],
    ["/relative/path", "url must be a valid absolute URL"],
    ["http://example.com/hooks", "url must use https://"],
    ["ftp://example.com/hooks", "url must use https://"],
    ["https://user:pass@example.com/hooks", "url must not contain credentials"],
    ["https://user@example.com/hooks", "url must not contain credentials"],
    ["https://localhost/hooks", "url must not point to localhost"],
    ["https://LOCALHOST./hooks", "url must not point to localhost"],
    ["https://api.localhost:8443/hooks", "url must not point to localhost"],
  ])("refuses %s", (url, message) => {
    expect(checkWebhookUrl(url, strict)).toBe(message);
  });

  it.each([
    "https://127.0.0.1/hooks",
    "https://2130706433/hooks",
    "https://0x7f.1/hooks",
    "https://10.0.0.5/hooks",
    "https://169.254.169.254/latest/meta-data",
    "https://[::1]/hooks",
    "https://[::ffff:127.0.0.1]/hooks",
    "https://[fd00::1]:8443/hooks",
    "https://[fe80::1]/hooks",
    "https://0.0.0.0/hooks",
  ])("refuses the literal non-public address in %s", (url) => {
    expect(checkWebhookUrl(url, strict)).toMatch(/must not point to a loopback, private/);
  });

  it("lets development and tests reach private targets, but still over https without credentials", () => {
    expect(checkWebhookUrl("https://localhost:8443/hooks", lenient)).toBeNull();
    expect(checkWebhookUrl("https://127.0.0.1:8443/hooks", lenient)).toBeNull();
    expect(checkWebhookUrl("http://localhost:8443/hooks", lenient)).toBe("url must use https://");
    expect(checkWebhookUrl("https://u:p@localhost/hooks", lenient)).toBe("url must not contain credentials");
  });
});

describe("createGuardedLookup", () => {
  const resolvingTo =
    (...addresses: string[]): ResolveAll =>
    (_hostname, _options, callback) =>
      callback(
        null,
        addresses.map((address): LookupAddress => ({ address, family: address.includes(":") ? 6 : 4 })),
      );

  const lookupWith = (resolveAll: ResolveAll, allowPrivateTargets: boolean, all: boolean) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }>((resolve) =>
      createGuardedLookup({ allowPrivateTargets, resolveAll })("hooks.example.com", { all }, (err, address, family) =>
        resolve({ err, address, family }),
      ),
    );

  it("passes public addresses through, one or all as asked", async () => {
    const resolveAll = resolvingTo("93.184.216.34", "2606:4700::1111");
    expect(await lookupWith(resolveAll, false, false)).toEqual({ err: null, address: "93.184.216.34", family: 4 });
    expect(await lookupWith(resolveAll, false, true)).toMatchObject({
      err: null,
      address: [
        { address: "93.184.216.34", family: 4 },
        { address: "2606:4700::1111", family: 6 },
      ],
    });
  });

  it("refuses a name if any of its addresses is forbidden", async () => {
    const { err } = await lookupWith(resolvingTo("93.184.216.34", "10.0.0.7"), false, true);
    expect(err).toBeInstanceOf(ForbiddenTargetError);
    expect(err?.code).toBe("ESSRF");
    expect(err?.message).toBe(
      "Refusing to connect to hooks.example.com: it resolves to 10.0.0.7, which is not a public address",
    );
  });

  it("allows private addresses when told to", async () => {
    expect(await lookupWith(resolvingTo("127.0.0.1"), true, false)).toEqual({
      err: null,
      address: "127.0.0.1",
      family: 4,
    });
  });

  it("passes DNS errors through", async () => {
    const failing: ResolveAll = (_hostname, _options, callback) =>
      callback(Object.assign(new Error("getaddrinfo ENOTFOUND"), { code: "ENOTFOUND" }), []);
    expect((await lookupWith(failing, false, false)).err?.code).toBe("ENOTFOUND");
  });
});

describe("the guarded lookup in an undici Agent", () => {
  // A port where nothing listens, so that without the guard the connection itself is refused.
  const freePort = () =>
    new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });

  const post = async (allowPrivateTargets: boolean, port: number) => {
    const dispatcher = new Agent({ connect: { lookup: createGuardedLookup({ allowPrivateTargets }) } });
    try {
      await request(`https://localhost:${port}/hooks`, { method: "POST", body: "{}", dispatcher });
      throw new Error("the request unexpectedly succeeded");
    } catch (err) {
      return err as NodeJS.ErrnoException;
    } finally {
      await dispatcher.close();
    }
  };

  it("refuses to connect to localhost before any connection is made", async () => {
    expect((await post(false, await freePort())).code).toBe("ESSRF");
  });

  it("connects (and here finds nothing listening) when private targets are allowed", async () => {
    expect((await post(true, await freePort())).code).toBe("ECONNREFUSED");
  });
});
