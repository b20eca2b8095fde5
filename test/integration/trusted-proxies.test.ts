// TRUST_PROXY: behind a TLS-terminating load balancer the service reads the client's protocol and
// address from X-Forwarded-Proto and -For, and only from the proxies it is told to trust. HSTS is
// sent when the request came over https, the Link header keeps the client's scheme, and rate
// limits count per client address.
import { ConfigError, loadConfig } from "../../src/config.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

const apps: TestApp[] = [];
afterAll(async () => {
  for (const t of apps) await t.close();
});

async function serviceTrusting(trustProxy: string | undefined): Promise<TestApp> {
  const t = await startTestApp({
    ...(trustProxy !== undefined && { TRUST_PROXY: trustProxy }),
    RATE_LIMIT_PER_MINUTE: "50",
  });
  apps.push(t);
  return t;
}

const fromProxy = (headers: Record<string, string>) => ({ token: null, headers });
const remaining = (res: { headers: Headers }) => Number(res.headers.get("ratelimit-remaining"));

describe("without TRUST_PROXY", () => {
  let t: TestApp;
  beforeAll(async () => (t = await serviceTrusting(undefined)));

  it("believes no X-Forwarded-Proto: no HSTS over plain http", async () => {
    const res = await t.request("GET", "/healthz", fromProxy({ "x-forwarded-proto": "https" }));
    expect(res.status).toBe(200);
    expect(res.headers.get("strict-transport-security")).toBeNull();
  });

  it("believes no X-Forwarded-For: a client cannot take a fresh budget by claiming another address", async () => {
    const first = await t.request("GET", "/healthz", fromProxy({ "x-forwarded-for": "203.0.113.1" }));
    const second = await t.request("GET", "/healthz", fromProxy({ "x-forwarded-for": "203.0.113.2" }));
    expect(remaining(second)).toBe(remaining(first) - 1);
  });
});

describe("TRUST_PROXY=1 (the load balancer in front)", () => {
  let t: TestApp;
  beforeAll(async () => (t = await serviceTrusting("1")));

  it("sends HSTS when the proxy says the request came over https, and not when it says http", async () => {
    const https = await t.request("GET", "/healthz", fromProxy({ "x-forwarded-proto": "https" }));
    expect(https.headers.get("strict-transport-security")).toBe("max-age=31536000; includeSubDomains");
    const http = await t.request("GET", "/healthz", fromProxy({ "x-forwarded-proto": "http" }));
    expect(http.headers.get("strict-transport-security")).toBeNull();
    const none = await t.request("GET", "/healthz", { token: null });
    expect(none.headers.get("strict-transport-security")).toBeNull();
  });

  it("links the next page with the client's scheme", async () => {
    for (const name of ["proxied-a", "proxied-b"]) {
      expect((await t.request("POST", "/applications", { body: { name } })).status).toBe(201);
    }
    const res = await t.request("GET", "/applications?limit=1", { headers: { "x-forwarded-proto": "https" } });
    expect(res.headers.get("link")).toMatch(/^<https:\/\/127\.0\.0\.1:\d+\/applications\?/);
  });

  it("counts the rate limit per client address: the last one the proxy added", async () => {
    const a1 = await t.request("GET", "/healthz", fromProxy({ "x-forwarded-for": "198.51.100.7" }));
    const a2 = await t.request("GET", "/healthz", fromProxy({ "x-forwarded-for": "198.51.100.7" }));
    // A client's own X-Forwarded-For entry comes first; the proxy appends the address it saw.
    const b = await t.request("GET", "/healthz", fromProxy({ "x-forwarded-for": "198.51.100.7, 198.51.100.8" }));
    expect(remaining(a1)).toBe(50 - 1);
    expect(remaining(a2)).toBe(50 - 2);
    expect(remaining(b)).toBe(50 - 1);
  });
});

describe("TRUST_PROXY as networks", () => {
  it("believes the headers of a peer in a trusted network, and walks back through trusted hops", async () => {
    const t = await serviceTrusting("loopback, 10.0.0.0/8");
    const https = await t.request("GET", "/healthz", fromProxy({ "x-forwarded-proto": "https" }));
    expect(https.headers.get("strict-transport-security")).not.toBeNull();
    // 10.1.2.3 is a trusted proxy too: the client is the address before it.
    const viaTwo = (extra: string) =>
      t.request("GET", "/healthz", fromProxy({ "x-forwarded-for": `${extra}192.0.2.44, 10.1.2.3` }));
    const first = await viaTwo("");
    const second = await viaTwo("192.0.2.99, ");
    expect(remaining(second)).toBe(remaining(first) - 1);
  });

  it("ignores the headers when the peer is not in a trusted network", async () => {
    const t = await serviceTrusting("10.0.0.0/8");
    const res = await t.request("GET", "/healthz", fromProxy({ "x-forwarded-proto": "https" }));
    expect(res.headers.get("strict-transport-security")).toBeNull();
    const first = await t.request("GET", "/healthz", fromProxy({ "x-forwarded-for": "203.0.113.1" }));
    const second = await t.request("GET", "/healthz", fromProxy({ "x-forwarded-for": "203.0.113.2" }));
    expect(remaining(second)).toBe(remaining(first) - 1);
  });
});

it("refuses a TRUST_PROXY that is neither hops nor networks, naming the setting", () => {
  expect(() => loadConfig({ TRUST_PROXY: "10.0.0.0/99" })).toThrow(ConfigError);
  expect(() => loadConfig({ TRUST_PROXY: "the load balancer" })).toThrow(/TRUST_PROXY/);
});
