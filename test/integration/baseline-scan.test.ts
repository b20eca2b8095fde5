// The baseline DAST scan (docs/spec/CONTRACT.md §12) against real local sites over http and https: each rule
// fires where its defect is planted and nowhere else, a careful site raises nothing, and the crawl
// keeps to its origin, its policy and its limits.
import type { LookupAddress } from "node:dns";
import { PASSIVE_RULES } from "../../src/scans/dast/passive-rules.ts";
import {
  PROBE_ORIGIN,
  runBaselineScan,
  TargetUnreachableError,
  type BaselineScanOptions,
  type CrawlSummary,
  type ZapReportDocument,
} from "../../src/scans/dast/baseline-scan.ts";
import type { ResolveAll } from "../../src/net/ssrf-guard.ts";
import { TargetAllowList } from "../../src/net/target-allow-list.ts";
import {
  bigSite,
  CAREFUL_HEADERS,
  cleanSite,
  DEFECTS,
  plantedAlerts,
  plantedSite,
  send,
} from "../helpers/dast-sites.ts";
import { eventually } from "../helpers/scan-engines.ts";
import { createSelfSignedCert, type SelfSignedCert } from "../helpers/self-signed-cert.ts";
import { startTargetSite, type TargetSite } from "../helpers/target-site.ts";

let cert: SelfSignedCert;
const sites: TargetSite[] = [];
beforeAll(() => {
  cert = createSelfSignedCert();
});
afterAll(async () => {
  await Promise.all(sites.map((s) => s.close()));
  cert.remove();
});

async function site(
  handler: Parameters<typeof startTargetSite>[0],
  scheme: "http" | "https" = "http",
): Promise<TargetSite> {
  const started = await startTargetSite(handler, scheme === "https" ? { tls: { key: cert.key, cert: cert.cert } } : {});
  sites.push(started);
  return started;
}

const permissive = { allowPrivateTargets: true };

async function scan(
  target: string,
  options: Partial<BaselineScanOptions> = {},
): Promise<{ report: ZapReportDocument; summary: CrawlSummary }> {
  let summary: CrawlSummary | undefined;
  const report = await runBaselineScan(target, {
    targetPolicy: permissive,
    tls: { ca: cert.cert },
    onSummary: (s) => (summary = s),
    ...options,
  });
  return { report, summary: summary! };
}

/** alert name → the paths of its instances, sorted. */
function alertsOf(report: ZapReportDocument): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  for (const alert of report.site[0]!.alerts)
    found[alert.name] = [...new Set(alert.instances.map((i) => new URL(i.uri).pathname))].sort();
  return found;
}

describe.each(["http", "https"] as const)("the planted site over %s", (scheme) => {
  let target: TargetSite;
  let report: ZapReportDocument;
  let summary: CrawlSummary;
  beforeAll(async () => {
    target = await site(plantedSite, scheme);
    ({ report, summary } = await scan(target.url("/")));
  });

  it("raises each planted rule exactly on its page, and nothing anywhere else", () => {
    expect(alertsOf(report)).toEqual(plantedAlerts(scheme));
  });

  it("crawled every page, robots.txt and sitemap.xml entries included, with GET only, naming itself", () => {
    const paths = target.paths();
    for (const defect of DEFECTS) expect(paths).toContain(defect.path);
    expect(paths).toEqual(
      expect.arrayContaining(["/", "/robots.txt", "/sitemap.xml", "/from-robots", "/from-sitemap", "/style.css"]),
    );
    expect(new Set(target.requests.map((r) => r.method))).toEqual(new Set(["GET"]));
    expect(target.requests.every((r) => /^appsec-service-baseline\//.test(r.headers["user-agent"] ?? ""))).toBe(true);
    expect(paths).toHaveLength(new Set(paths).size); // each URL once
    expect(summary).toMatchObject({ failures: 0, stoppedBy: "done", requests: paths.length });
  });

  it("writes ZAP's traditional JSON: the rule's ids, risk and CWE, one alert per rule with its instances", () => {
    expect(report).toMatchObject({
      "@programName": "appsec-baseline",
      "@version": "1.0.0",
      site: [{ "@name": target.origin, "@ssl": String(scheme === "https") }],
    });
    for (const alert of report.site[0]!.alerts) {
      const rule = PASSIVE_RULES.find((r) => r.name === alert.name)!;
      expect(alert).toMatchObject({
        pluginid: String(rule.pluginId),
        alertRef: rule.alertRef,
        riskcode: String(rule.risk),
        cweid: String(rule.cweId),
        wascid: String(rule.wascId),
        count: String(alert.instances.length),
      });
      for (const instance of alert.instances) expect(instance).toMatchObject({ method: "GET", attack: "" });
    }
    const cookie = report.site[0]!.alerts.find((a) => a.alertRef === "10054-1")!;
    expect(cookie.instances).toEqual([
      {
        uri: target.url("/cookie-no-samesite"),
        method: "GET",
        param: "pref",
        attack: "",
        evidence: "set-cookie: pref",
        otherinfo: "",
      },
    ]);
  });
});

describe.each(["http", "https"] as const)("a careful site over %s", (scheme) => {
  it("raises nothing, on every page it crawled", async () => {
    const target = await site(cleanSite, scheme);
    const { report, summary } = await scan(target.url("/"));
    expect(report.site[0]!.alerts).toEqual([]);
    expect(target.paths()).toEqual(
      expect.arrayContaining([
        "/",
        "/about",
        "/login",
        "/search",
        "/session",
        "/api/status",
        "/logout",
        "/moved",
        "/missing",
        "/app.js",
        "/style.css",
        "/robots.txt",
        "/sitemap.xml",
        "/from-robots",
        "/from-sitemap",
      ]),
    );
    expect(summary).toMatchObject({ failures: 0, stoppedBy: "done", offOrigin: 1 }); // the CDN script
  });
});

describe("limits", () => {
  it("stops a site of 10,000 linked pages at maxPages requests", async () => {
    const target = await site(bigSite);
    const { summary } = await scan(target.url("/"), { maxPages: 100 });
    expect(target.requests).toHaveLength(100);
    expect(summary).toMatchObject({ requests: 100, stoppedBy: "max-pages" });
    // Breadth-first: the front page and what it leads to first, then the tree level by level; the
    // 96 pages fetched all lie in its first six levels (/page/1 to /page/126).
    expect(new Set(target.paths().slice(0, 6))).toEqual(
      new Set(["/", "/style.css", "/page/1", "/page/2", "/robots.txt", "/sitemap.xml"]),
    );
    const pages = target.paths().flatMap((p) => /^\/page\/(\d+)$/.exec(p)?.slice(1).map(Number) ?? []);
    expect(pages).toHaveLength(96);
    expect(Math.max(...pages)).toBeLessThanOrEqual(126);
  });

  it("reads a page that never ends up to 2 MiB, then closes it and completes the scan", async () => {
    let written = 0;
    let closed = false;
    const target = await site((req, res) => {
      if (req.url !== "/") return send(res, { status: 404 });
      res.writeHead(200, { ...CAREFUL_HEADERS, "content-type": "text/html", "x-powered-by": "Streamer" });
      const chunk = Buffer.from(`<p>${"x".repeat(64 * 1024 - 8)}</p>\n`);
      const pump = () => {
        while (!closed && res.write(chunk)) written += chunk.length;
      };
      res.on("drain", pump);
      res.on("close", () => (closed = true));
      pump();
    });
    const { report } = await scan(target.url("/"));
    expect(alertsOf(report)).toEqual({ [PASSIVE_RULES.find((r) => r.alertRef === "10037")!.name]: ["/"] });
    await eventually(async () => closed);
    // What the crawl read (2 MiB) plus what socket buffers held when it closed the connection.
    expect(written).toBeLessThan(2 * 1024 * 1024 + 8 * 1024 * 1024);
  });

  it("does not follow a redirect to another origin", async () => {
    const elsewhere = await site((_req, res) => send(res, { body: "elsewhere" }));
    const target = await site((req, res) => {
      if (req.url === "/") return send(res, { body: `<a href="/leave">leave</a>` });
      if (req.url === "/leave") return send(res, { status: 302, headers: { location: elsewhere.url("/landing") } });
      send(res, { status: 404 });
    });
    const { summary } = await scan(target.url("/"));
    expect(target.paths()).toContain("/leave");
    expect(elsewhere.requests).toEqual([]);
    expect(summary.offOrigin).toBe(1);
  });

  it("checks every request after DNS, redirects included: a host that turns private midway is not reached again", async () => {
    // Each answer closes its connection, so each request resolves the name again: the first time to
    // the allowed 127.0.0.1, then to 127.0.0.2, a loopback address the policy refuses.
    const target = await site((req, res) => {
      if (req.url === "/") return send(res, { status: 302, headers: { location: "/next", connection: "close" } });
      send(res, { body: "<p>next</p>", headers: { connection: "close" } });
    });
    let lookups = 0;
    const rebinding: ResolveAll = (_host, _options, callback) =>
      callback(null, [{ address: lookups++ === 0 ? "127.0.0.1" : "127.0.0.2", family: 4 } as LookupAddress]);
    const { summary } = await scan(`http://app.test:${target.port}/`, {
      targetPolicy: { allowPrivateTargets: false, allowList: TargetAllowList.parse("127.0.0.1/32") },
      resolveAll: rebinding,
    });
    expect(target.paths()).toEqual(["/"]);
    expect(summary.failures).toBe(summary.requests - 1);
    expect(summary.requests).toBeGreaterThanOrEqual(2); // /next (the redirect), robots.txt, sitemap.xml
  });

  it("sends the CORS probe's Origin, and stops at the duration limit with what it has", async () => {
    const target = await site((req, res) => {
      if (req.url === "/") return send(res, { body: `<a href="/slow">slow</a>`, headers: { "x-powered-by": "Fast" } });
      // /slow never answers.
    });
    const started = Date.now();
    const { report, summary } = await scan(target.url("/"), { maxDurationMs: 1500 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(summary.stoppedBy).toBe("max-duration");
    expect(alertsOf(report)).toEqual({ [PASSIVE_RULES.find((r) => r.alertRef === "10037")!.name]: ["/"] });
    expect(target.requests[0]!.headers.origin).toBe(PROBE_ORIGIN);
  });
});

describe("a target that answers nothing", () => {
  const reasonOf = async (target: string, options: Partial<BaselineScanOptions> = {}) => {
    const err = await scan(target, options).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TargetUnreachableError);
    return err as TargetUnreachableError;
  };

  it("refused: nothing listens on the port", async () => {
    const gone = await site(cleanSite);
    const url = gone.url("/");
    await gone.close();
    const err = await reasonOf(url);
    expect(err.kind).toBe("refused");
    expect(err.reason).toBe(`${gone.origin} refused the connection`);
  });

  it("dns: the name does not resolve", async () => {
    const nowhere: ResolveAll = (_host, _options, callback) =>
      callback(Object.assign(new Error("getaddrinfo ENOTFOUND"), { code: "ENOTFOUND" }), []);
    const err = await reasonOf("http://app.does-not-exist.test/", { resolveAll: nowhere });
    expect(err).toMatchObject({ kind: "dns", reason: "app.does-not-exist.test does not resolve (ENOTFOUND)" });
  });

  it("timeout: the first page never answers", async () => {
    const silent = await site(() => {});
    const err = await reasonOf(silent.url("/"), { requestTimeoutMs: 300 });
    expect(err).toMatchObject({ kind: "timeout", reason: `${silent.url("/")} did not answer within 0.3 s` });
  });

  it("tls: a certificate the scan does not trust", async () => {
    const untrusted = await site(cleanSite, "https");
    const err = await reasonOf(untrusted.url("/"), { tls: {} });
    expect(err.kind).toBe("tls");
    expect(err.reason).toMatch(/^TLS with 127\.0\.0\.1:\d+ failed: /);
  });

  it("forbidden: the policy refuses private addresses, literal or resolved, unless allow-listed", async () => {
    const target = await site(cleanSite);
    const strict = { allowPrivateTargets: false };
    expect(await reasonOf(target.url("/"), { targetPolicy: strict })).toMatchObject({
      kind: "forbidden",
      reason: expect.stringContaining("non-public address"),
    });
    const toLoopback: ResolveAll = (_host, _options, callback) => callback(null, [{ address: "127.0.0.1", family: 4 }]);
    const resolved = await reasonOf(`http://app.test:${target.port}/`, {
      targetPolicy: strict,
      resolveAll: toLoopback,
    });
    expect(resolved).toMatchObject({
      kind: "forbidden",
      reason: "Refusing to connect to app.test: it resolves to 127.0.0.1, which is not a public address",
    });
    expect(target.requests).toEqual([]);

    const byHost = await scan(`http://app.test:${target.port}/`, {
      targetPolicy: { allowPrivateTargets: false, allowList: TargetAllowList.parse("app.test") },
      resolveAll: toLoopback,
    });
    const byNetwork = await scan(target.url("/"), {
      targetPolicy: { allowPrivateTargets: false, allowList: TargetAllowList.parse("127.0.0.0/8") },
    });
    expect([byHost.summary.failures, byNetwork.summary.failures]).toEqual([0, 0]);
    expect(target.paths().filter((p) => p === "/")).toHaveLength(2);
  });
});

it("stops when its signal is aborted, rejecting with the signal's reason", async () => {
  const target = await site((req, res) => {
    if (req.url === "/") return send(res, { body: `<a href="/hang">hang</a>` });
  });
  const controller = new AbortController();
  const scanning = scan(target.url("/"), { signal: controller.signal });
  await eventually(async () => target.paths().includes("/hang"));
  controller.abort(new Error("stopping"));
  await expect(scanning).rejects.toThrow("stopping");
});
