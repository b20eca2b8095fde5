// SCAN_ENGINES=dast:baseline through the service (docs/spec/CONTRACT.md §12): a triggered dast scan crawls the
// application's serviceUrl and completes through the usual lifecycle, its findings the same as an
// upload of the same ZAP report; an unreachable or forbidden target fails the scan with a reason;
// rescans dedupe and auto-resolve; triggering without serviceUrl is 400 (REST and GraphQL).
import { runBaselineScan } from "../../src/scans/dast/baseline-scan.ts";
import { bigSite, cleanSite, DEFECTS, plantedSite, send } from "../helpers/dast-sites.ts";
import { codesOf, gql } from "../helpers/graphql.ts";
import { createSelfSignedCert, type SelfSignedCert } from "../helpers/self-signed-cert.ts";
import { startTargetSite, type SiteHandler, type TargetSite } from "../helpers/target-site.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

const BASELINE = { kind: "engine", format: "zap", tool: "appsec-baseline", toolVersion: "1.0.0" };

let cert: SelfSignedCert;
let t: TestApp;
const sites: TargetSite[] = [];
beforeAll(async () => {
  cert = createSelfSignedCert();
  t = await startTestApp(
    { SCAN_ENGINES: "dast:baseline", SCAN_ALLOW_PRIVATE_TARGETS: "true", DAST_MAX_PAGES: "60" },
    { scanTargetTls: { ca: cert.cert } },
  );
});
afterAll(async () => {
  await t.close();
  await Promise.all(sites.map((s) => s.close()));
  cert.remove();
});

async function site(handler: SiteHandler, scheme: "http" | "https" = "http"): Promise<TargetSite> {
  const started = await startTargetSite(handler, scheme === "https" ? { tls: { key: cert.key, cert: cert.cert } } : {});
  sites.push(started);
  return started;
}

let n = 0;
async function application(app: TestApp, serviceUrl?: string): Promise<string> {
  const res = await app.request("POST", "/applications", {
    body: { name: `dast-${++n}`, ...(serviceUrl && { serviceUrl }) },
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

/** Triggers a dast scan, runs it, and returns the scan as the API shows it. */
async function scanned(app: TestApp, appId: string) {
  const trigger = await app.request("POST", `/applications/${appId}/scans`, { body: { scanType: "dast" } });
  expect(trigger.status).toBe(202);
  while ((await app.app.scanRunner.runOnce()) > 0);
  return (await app.request("GET", trigger.headers.get("location")!)).body;
}

const vulnerabilitiesOf = async (app: TestApp, appId: string) =>
  (await app.request("GET", `/applications/${appId}/vulnerabilities?limit=500`)).body as Array<Record<string, unknown>>;
/** What a finding says, without what is particular to its application and scan. */
const contentOf = (vulnerabilities: Array<Record<string, unknown>>) =>
  vulnerabilities
    .map(
      ({
        title,
        description,
        severity,
        cwe,
        cve,
        cvssScore,
        status,
        introducedIn,
        remediation,
        location,
        tool,
        scanType,
      }) => ({
        title,
        description,
        severity,
        cwe,
        cve,
        cvssScore,
        status,
        introducedIn,
        remediation,
        location,
        tool,
        scanType,
      }),
    )
    .sort((a, b) => `${a.title} ${a.location}`.localeCompare(`${b.title} ${b.location}`));

describe("a dast scan on the baseline engine", () => {
  it("is queued with its source, then reports exactly what an upload of the same ZAP report does", async () => {
    const target = await site(plantedSite, "https");
    const appId = await application(t, target.url("/"));
    const trigger = await t.request("POST", `/applications/${appId}/scans`, { body: { scanType: "dast" } });
    expect(trigger.body).toMatchObject({ status: "queued", source: BASELINE, failure: null });
    while ((await t.app.scanRunner.runOnce()) > 0);
    const scan = (await t.request("GET", trigger.headers.get("location")!)).body;
    const planted = DEFECTS.filter((d) => d.only !== "http");
    expect(scan).toMatchObject({
      status: "completed",
      source: BASELINE,
      failure: null,
      summary: { totalFindings: planted.length, critical: 0, high: 0 },
    });
    expect(scan.summary.medium + scan.summary.low).toBe(planted.length);
    const found = await vulnerabilitiesOf(t, appId);
    expect(found).toHaveLength(planted.length);
    expect(new Set(found.map((v) => new URL(v.location as string).pathname))).toEqual(
      new Set(planted.map((d) => d.path)),
    );
    expect(found.find((v) => v.title === "Cookie Without Secure Flag")).toMatchObject({
      severity: "low",
      cwe: "CWE-614",
      cve: null,
      cvssScore: 0.1,
      location: target.url("/cookie-no-secure"),
      tool: "appsec-baseline",
      scanId: scan.id,
    });

    // The same crawl's report, uploaded as ZAP's: the same findings, field for field.
    const report = await runBaselineScan(target.url("/"), {
      targetPolicy: { allowPrivateTargets: true },
      tls: { ca: cert.cert },
    });
    const other = await application(t);
    const upload = await t.request("POST", `/applications/${other}/scan-reports`, { body: report });
    expect(upload.status).toBe(202);
    expect(upload.body).toMatchObject({
      source: { kind: "report", format: "zap", tool: "appsec-baseline", toolVersion: "1.0.0" },
    });
    expect(contentOf(await vulnerabilitiesOf(t, other))).toEqual(contentOf(found));
  });

  it("completes with no findings on a careful site", async () => {
    const target = await site(cleanSite);
    const appId = await application(t, target.url("/"));
    const scan = await scanned(t, appId);
    expect(scan).toMatchObject({ status: "completed", summary: { totalFindings: 0 }, failure: null });
    expect(await vulnerabilitiesOf(t, appId)).toEqual([]);
    expect(target.paths()).toContain("/from-sitemap");
  });

  it("crawls at most DAST_MAX_PAGES requests", async () => {
    const target = await site(bigSite);
    expect((await scanned(t, await application(t, target.url("/")))).status).toBe("completed");
    expect(target.requests).toHaveLength(60);
  });

  it("fails, with the reason, when the target answers nothing", async () => {
    const gone = await site(cleanSite);
    await gone.close();
    const appId = await application(t, gone.url("/"));
    const scan = await scanned(t, appId);
    expect(scan).toMatchObject({
      status: "failed",
      summary: null,
      failure: { reason: `${gone.origin} refused the connection` },
    });
    const events = await t.app.db.prisma.event.findMany({
      where: { applicationId: appId, type: { startsWith: "scan." } },
      orderBy: { occurredAt: "asc" },
    });
    expect(events.map((e) => e.type)).toEqual(["scan.started", "scan.failed"]);
  });

  it("dedupes findings on a rescan and resolves the one fixed on the target in between", async () => {
    let poweredBy = true;
    const target = await site((req, res) =>
      send(
        res,
        req.url === "/"
          ? { body: `<p>home</p>`, headers: { "x-powered-by": poweredBy ? "Express" : null, server: "nginx/1.25.3" } }
          : { status: 404 },
      ),
    );
    const appId = await application(t, target.url("/"));
    expect((await scanned(t, appId)).summary.totalFindings).toBe(2);
    const first = await vulnerabilitiesOf(t, appId);

    expect((await scanned(t, appId)).summary.totalFindings).toBe(2);
    const second = await vulnerabilitiesOf(t, appId);
    expect(second.map((v) => [v.id, v.status])).toEqual(first.map((v) => [v.id, "open"]));
    expect(await t.app.db.prisma.event.count({ where: { applicationId: appId, type: "vulnerability.created" } })).toBe(
      2,
    );

    poweredBy = false;
    expect((await scanned(t, appId)).summary.totalFindings).toBe(1);
    const third = await vulnerabilitiesOf(t, appId);
    expect(Object.fromEntries(third.map((v) => [v.title, v.status]))).toEqual({
      'Server Leaks Information via "X-Powered-By" HTTP Response Header Field(s)': "resolved",
      'Server Leaks Version Information via "Server" HTTP Response Header Field': "open",
    });
  });
});

describe("triggering a dast scan without serviceUrl", () => {
  it("is 400 over REST, naming serviceUrl, while other types and applications with one are accepted", async () => {
    const appId = await application(t);
    const res = await t.request("POST", `/applications/${appId}/scans`, { body: { scanType: "dast" } });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({
      code: "validation_failed",
      detail: "The application has no serviceUrl for the dast scan to crawl",
      errors: [{ path: "serviceUrl", message: expect.stringContaining("set the application's serviceUrl first") }],
    });
    expect((await t.request("POST", `/applications/${appId}/scans`, { body: { scanType: "sast" } })).status).toBe(202);
    expect(
      (await t.request("GET", `/applications/${appId}/scans`)).body.map((s: { scanType: string }) => s.scanType),
    ).toEqual(["sast"]);
    expect(
      (
        await t.request("POST", `/applications/01900000-0000-7000-8000-000000000000/scans`, {
          body: { scanType: "dast" },
        })
      ).status,
    ).toBe(404);
  });

  it("is BAD_USER_INPUT over GraphQL", async () => {
    const appId = await application(t);
    const res = await gql(
      t,
      `mutation($id: ID!) { triggerScan(applicationId: $id, input: { scanType: DAST }) { id } }`,
      { id: appId },
    );
    expect(codesOf(res)).toEqual(["BAD_USER_INPUT"]);
    expect(res.body.errors[0].extensions.errors).toEqual([
      { path: "serviceUrl", message: expect.stringContaining("serviceUrl") },
    ]);
  });
});

describe("scan targets on a private network", () => {
  let strict: TestApp;
  beforeAll(async () => {
    strict = await startTestApp(
      { SCAN_ENGINES: "dast:baseline", SCAN_TARGET_ALLOW: "127.0.0.1/32" },
      { database: t.database },
    );
  });
  afterAll(() => strict.close());

  it("are refused unless SCAN_TARGET_ALLOW lists them, and the failure says how to allow them", async () => {
    const target = await site(cleanSite);
    const allowed = await scanned(strict, await application(strict, target.url("/")));
    expect(allowed).toMatchObject({ status: "completed", summary: { totalFindings: 0 } });

    const refused = await scanned(strict, await application(strict, `http://127.0.0.2:${target.port}/`));
    expect(refused.status).toBe("failed");
    expect(refused.failure.reason).toBe(
      `Refusing to request http://127.0.0.2:${target.port}: its host must not point to a loopback, private, link-local, multicast or otherwise non-public address ` +
        "(scan targets on a private network need SCAN_TARGET_ALLOW (their hosts or networks) or SCAN_ALLOW_PRIVATE_TARGETS=true)",
    );
  });
});
