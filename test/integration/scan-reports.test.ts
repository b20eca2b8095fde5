// Uploading scanners' reports (docs/spec/CONTRACT.md §11): a report becomes a completed scan with the same
// events, dedup, per-tool auto-resolve and policy verdict as an engine's scan; bad uploads are
// 4xx with JSON Pointers into the report.
import { gzipSync } from "node:zlib";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SCAN_DURATION_MS: "0" });
});
afterAll(() => t.close());

let n = 0;
const newApplication = async () =>
  (await t.request("POST", "/applications", { body: { name: `reports-${++n}` } })).body.id as string;

interface SarifResultSpec {
  rule: string;
  file: string;
  line: number;
  level?: "error" | "warning" | "note";
}

/** A SARIF 2.1.0 log as a SAST tool writes it: rules with CWE tags and security-severity, results with fingerprints. */
function sarif(tool: string, results: SarifResultSpec[], version = "1.2.3") {
  const rules = [
    {
      id: "js/sql-injection",
      shortDescription: { text: "SQL query built from user input" },
      properties: { tags: ["security", "external/cwe/cwe-089"], "security-severity": "8.8" },
    },
    {
      id: "js/reflected-xss",
      shortDescription: { text: "Reflected cross-site scripting" },
      properties: { tags: ["security", "external/cwe/cwe-079", "external/cwe/cwe-116"], "security-severity": "6.1" },
    },
    { id: "js/weak-hash", shortDescription: { text: "Weak hash" }, defaultConfiguration: { level: "note" } },
  ];
  return {
    $schema: "https://json.schemastore.org/sarif-2.1.0.json",
    version: "2.1.0",
    runs: [
      {
        tool: { driver: { name: tool, version, rules } },
        results: results.map((r) => ({
          ruleId: r.rule,
          ruleIndex: rules.findIndex((rule) => rule.id === r.rule),
          ...(r.level && { level: r.level }),
          message: { text: `Found ${r.rule} in ${r.file} — “unicode” ✓` },
          locations: [{ physicalLocation: { artifactLocation: { uri: r.file }, region: { startLine: r.line } } }],
          partialFingerprints: { primaryLocationLineHash: `${r.rule}:${r.file}` },
        })),
      },
    ],
  };
}

const upload = (app: string, report: unknown, options: { query?: string; type?: string; token?: string } = {}) =>
  t.request("POST", `/applications/${app}/scan-reports${options.query ?? ""}`, {
    rawBody: JSON.stringify(report),
    headers: { "content-type": options.type ?? "application/sarif+json" },
    ...(options.token && { token: options.token }),
  });

const vulnerabilitiesOf = async (app: string) =>
  (await t.request("GET", `/applications/${app}/vulnerabilities?limit=500`)).body as any[];
const eventsOf = async (app: string, type: string) =>
  t.app.db.prisma.event.count({ where: { applicationId: app, type } });

describe("uploading a SARIF report", () => {
  it("records a completed scan with the report's tool and its findings, field by field", async () => {
    const app = await newApplication();
    const res = await upload(
      app,
      sarif("Semgrep", [
        { rule: "js/sql-injection", file: "src/db.js", line: 42 },
        { rule: "js/reflected-xss", file: "src/view.js", line: 7 },
      ]),
      { query: "?triggeredBy=ci-job-17" },
    );
    expect(res.status).toBe(202);
    expect(res.headers.get("location")).toBe(`/applications/${app}/scans/${res.body.id}`);
    expect(res.body).toMatchObject({
      applicationId: app,
      scanType: "sast",
      status: "completed",
      triggeredBy: "ci-job-17",
      summary: { totalFindings: 2, critical: 0, high: 1, medium: 1, low: 0 },
      source: { kind: "report", format: "sarif", tool: "Semgrep", toolVersion: "1.2.3" },
    });
    expect((await t.request("GET", res.headers.get("location")!)).body).toEqual(res.body);

    const vulns = await vulnerabilitiesOf(app);
    const sqli = vulns.find((v) => v.cwe === "CWE-89");
    expect(sqli).toMatchObject({
      scanId: res.body.id,
      scanType: "sast",
      severity: "high",
      cvssScore: 8.8,
      cve: null,
      title: "SQL query built from user input",
      location: "src/db.js:42",
      status: "open",
      tool: "Semgrep",
    });
    expect(sqli.description).toContain("“unicode” ✓");
    expect(vulns.find((v) => v.location === "src/view.js:7")).toMatchObject({
      severity: "medium",
      cvssScore: 6.1,
      cwe: "CWE-79",
    });
    expect(await eventsOf(app, "scan.started")).toBe(1);
    expect(await eventsOf(app, "scan.completed")).toBe(1);
    expect(await eventsOf(app, "vulnerability.created")).toBe(2);
  });

  it("creates nothing on re-upload, resolves what a later report no longer lists, and leaves other tools' findings alone", async () => {
    const app = await newApplication();
    const both = [
      { rule: "js/sql-injection", file: "a.js", line: 1 },
      { rule: "js/reflected-xss", file: "b.js", line: 2 },
    ];
    expect((await upload(app, sarif("Semgrep", both))).status).toBe(202);
    expect((await upload(app, sarif("CodeQL", [{ rule: "js/sql-injection", file: "c.js", line: 3 }]))).status).toBe(
      202,
    );
    // The built-in engine's sast findings, under tool `simulator`.
    expect((await t.request("POST", `/applications/${app}/scans`, { body: { scanType: "sast" } })).status).toBe(202);
    while ((await t.app.scanRunner.runOnce()) > 0);
    const before = await vulnerabilitiesOf(app);
    const created = await eventsOf(app, "vulnerability.created");

    expect((await upload(app, sarif("Semgrep", both))).status).toBe(202);
    expect(await vulnerabilitiesOf(app)).toHaveLength(before.length);
    expect(await eventsOf(app, "vulnerability.created")).toBe(created);

    // A moved line keeps its partial fingerprint: the same finding, not a new one.
    expect((await upload(app, sarif("Semgrep", [{ ...both[0]!, line: 10 }]))).status).toBe(202);
    const after = await vulnerabilitiesOf(app);
    expect(after).toHaveLength(before.length);
    const byTool = (tool: string, status: string) => after.filter((v) => v.tool === tool && v.status === status).length;
    expect(byTool("Semgrep", "resolved")).toBe(1);
    expect(byTool("Semgrep", "open")).toBe(1);
    expect(byTool("CodeQL", "open")).toBe(1);
    expect(after.filter((v) => v.tool === "simulator" && v.status === "resolved")).toHaveLength(0);
    expect(await eventsOf(app, "vulnerability.resolved")).toBe(1);

    // Filtered by tool, over REST and GraphQL, with the scans' sources.
    const codeql = (await t.request("GET", `/applications/${app}/vulnerabilities?tool=CodeQL`)).body as any[];
    expect(codeql.map((v) => v.location)).toEqual(["c.js:3"]);
    const gql = await t.request("POST", "/graphql", {
      body: {
        query: `query($id: ID!) { application(id: $id) {
          vulnerabilities(filter: { tool: "Semgrep", status: OPEN }) { totalCount edges { node { tool location } } }
          scans(first: 1) { edges { node { source { kind format tool toolVersion } } } }
        } vulnerabilities(filter: { applicationId: $id, tool: "simulator" }) { totalCount } }`,
        variables: { id: app },
      },
    });
    expect(gql.body.errors).toBeUndefined();
    expect(gql.body.data.application.vulnerabilities).toEqual({
      totalCount: 1,
      edges: [{ node: { tool: "Semgrep", location: "a.js:1" } }],
    });
    expect(gql.body.data.application.scans.edges[0].node.source).toEqual({
      kind: "REPORT",
      format: "SARIF",
      tool: "Semgrep",
      toolVersion: "1.2.3",
    });
    expect(gql.body.data.vulnerabilities.totalCount).toBe(after.filter((v) => v.tool === "simulator").length);
    expect(gql.body.data.vulnerabilities.totalCount).toBeGreaterThan(0);
  });

  it("takes scanType, gzip, and any of the report media types", async () => {
    const app = await newApplication();
    const body = gzipSync(JSON.stringify(sarif("Trivy", [{ rule: "js/weak-hash", file: "Dockerfile", line: 1 }])));
    const res = await fetch(`${t.baseUrl}/applications/${app}/scan-reports?scanType=container`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${await t.token()}`,
        "content-type": "application/json",
        "content-encoding": "gzip",
      },
      body,
    });
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ scanType: "container", source: { tool: "Trivy", format: "sarif" } });
  });
});

describe("a report larger than a batch of findings", () => {
  // 12,000 results on 6,000 files: result i and result i + 6,000 are the same finding, more than a
  // batch (5,000) apart in the stream of findings.
  const results = Array.from({ length: 12_000 }, (_, i) => ({
    rule: "js/sql-injection",
    file: `src/f${i % 6_000}.js`,
    line: 1,
  }));
  const vulnerabilityCount = (app: string) => t.app.db.prisma.vulnerability.count({ where: { applicationId: app } });

  it("counts a finding reported in two batches once, and creates nothing when uploaded again", async () => {
    const app = await newApplication();
    const first = await upload(app, sarif("Semgrep", results));
    expect(first.status).toBe(202);
    expect(first.body.summary).toEqual({ totalFindings: 6_000, critical: 0, high: 6_000, medium: 0, low: 0 });
    expect(await vulnerabilityCount(app)).toBe(6_000);
    expect(await eventsOf(app, "vulnerability.created")).toBe(6_000);

    const again = await upload(app, sarif("Semgrep", results));
    expect(again.body.summary.totalFindings).toBe(6_000);
    expect(await vulnerabilityCount(app)).toBe(6_000);
    expect(await eventsOf(app, "vulnerability.created")).toBe(6_000);
    expect(await eventsOf(app, "vulnerability.resolved")).toBe(0);
  });

  it("frees its reader when the upload fails before the findings are read", async () => {
    // As many failures as there are reader threads (at most 2): a reader left waiting would hold one each.
    for (let i = 0; i < 2; i++) {
      expect((await upload("01a20f0e-0000-7000-8000-000000000000", sarif("Semgrep", results))).status).toBe(404);
    }
    const app = await newApplication();
    const next = await upload(app, sarif("Semgrep", results.slice(0, 10)));
    expect(next.status).toBe(202);
    expect(next.body.summary.totalFindings).toBe(10);
  });
});

describe("bad uploads", () => {
  let app: string;
  beforeAll(async () => (app = await newApplication()));

  it.each([
    ["not JSON", "{", 400, "malformed_json"],
    ["no known format", JSON.stringify({ hello: "world" }), 400, "validation_failed"],
    [
      "a lone surrogate",
      '{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x\\udfff"}}}]}',
      400,
      "validation_failed",
    ],
    [
      "nesting 10,000 levels deep",
      `{"version":"2.1.0","runs":${"[".repeat(10_000)}${"]".repeat(10_000)}}`,
      400,
      "validation_failed",
    ],
  ])("%s is a 400", async (_what, rawBody, status, code) => {
    const res = await t.request("POST", `/applications/${app}/scan-reports`, {
      rawBody,
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(status);
    expect(res.body.code).toBe(code);
  });

  it("names the JSON Pointer of a schema violation and of unsafe text", async () => {
    const bad = sarif("Semgrep", [{ rule: "js/sql-injection", file: "a.js", line: 1 }]) as any;
    bad.runs[0].results[0].level = "catastrophic";
    const res = await upload(app, bad);
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ path: "/runs/0/results/0/level" }));
    const lone = await t.request("POST", `/applications/${app}/scan-reports`, {
      rawBody: '{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x\\udfff"}}}]}',
      headers: { "content-type": "application/json" },
    });
    expect(lone.body.errors).toEqual([
      { path: "/runs/0/tool/driver/name", message: expect.stringContaining("lone UTF-16 surrogate") },
    ]);
  });

  it("refuses an unknown format or scanType by name", async () => {
    const report = sarif("Semgrep", []);
    expect((await upload(app, report, { query: "?format=pdf" })).body.errors).toEqual([
      { path: "format", message: expect.any(String) },
    ]);
    expect((await upload(app, report, { query: "?scanType=fuzz" })).body.errors).toEqual([
      expect.objectContaining({ path: "scanType" }),
    ]);
  });

  it("answers 415 to other media types, 413 above 50 MiB (compressed or not), 404 and 403 as any write", async () => {
    const report = sarif("Semgrep", []);
    expect((await upload(app, report, { type: "text/plain" })).status).toBe(415);
    const bomb = gzipSync(Buffer.alloc(50 * 1024 * 1024 + 1, " "));
    const res = await fetch(`${t.baseUrl}/applications/${app}/scan-reports`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${await t.token()}`,
        "content-type": "application/json",
        "content-encoding": "gzip",
      },
      body: bomb,
    });
    expect(res.status).toBe(413);
    expect((await upload("01a20f0e-0000-7000-8000-000000000000", report)).status).toBe(404);
    expect((await upload(app, report, { token: await t.token(["scans:read"]) })).status).toBe(403);
  });

  it("accepts exactly 50 MiB", async () => {
    const text = JSON.stringify(sarif("Semgrep", []));
    const padded = text + " ".repeat(50 * 1024 * 1024 - Buffer.byteLength(text));
    const res = await t.request("POST", `/applications/${app}/scan-reports`, {
      rawBody: padded,
      headers: { "content-type": "application/sarif+json" },
    });
    expect(res.status).toBe(202);
  });
});

describe("a triggered scan completed by CI's report (SCAN_ENGINES)", () => {
  let ext: TestApp;
  beforeAll(async () => {
    ext = await startTestApp({
      SCAN_DURATION_MS: "0",
      SCAN_ENGINES: "sast:external",
      SCAN_EXTERNAL_TIMEOUT_MS: "60000",
    });
  });
  afterAll(() => ext.close());

  const appOn = async () =>
    (await ext.request("POST", "/applications", { body: { name: `external-${++n}` } })).body.id as string;
  const trigger = async (app: string, scanType = "sast") =>
    ext.request("POST", `/applications/${app}/scans`, { body: { scanType } });
  const report = (app: string, scanId: string, body: unknown) =>
    ext.request("POST", `/applications/${app}/scans/${scanId}/report`, {
      rawBody: JSON.stringify(body),
      headers: { "content-type": "application/sarif+json" },
    });
  const drain = async () => {
    while ((await ext.app.scanRunner.runOnce()) > 0);
  };
  const events = (app: string, type: string) => ext.app.db.prisma.event.count({ where: { applicationId: app, type } });

  it("waits for the report instead of running the engine, then completes that very scan from it", async () => {
    const app = await appOn();
    const triggered = await trigger(app);
    expect(triggered.status).toBe(202);
    expect(triggered.body).toMatchObject({
      status: "queued",
      source: { kind: "report", format: null, tool: "external", toolVersion: null },
    });
    await drain();
    expect((await ext.request("GET", `/applications/${app}/scans/${triggered.body.id}`)).body.status).toBe("queued");
    // While it waits, it is the application's active sast scan.
    expect((await trigger(app)).status).toBe(409);

    const res = await report(
      app,
      triggered.body.id,
      sarif("Semgrep", [{ rule: "js/sql-injection", file: "src/db.js", line: 42 }]),
    );
    expect(res.status).toBe(202);
    expect(res.headers.get("location")).toBe(`/applications/${app}/scans/${triggered.body.id}`);
    expect(res.body).toMatchObject({
      id: triggered.body.id,
      status: "completed",
      scanType: "sast",
      summary: { totalFindings: 1, high: 1 },
      source: { kind: "report", format: "sarif", tool: "Semgrep", toolVersion: "1.2.3" },
    });
    const vulns = (await ext.request("GET", `/applications/${app}/vulnerabilities`)).body as any[];
    expect(vulns).toEqual([
      expect.objectContaining({ scanId: triggered.body.id, location: "src/db.js:42", tool: "Semgrep" }),
    ]);
    expect(await events(app, "scan.started")).toBe(1);
    expect(await events(app, "scan.completed")).toBe(1);
  });

  it("409s a second report, and a report for a type the built-in engine runs", async () => {
    const app = await appOn();
    const triggered = await trigger(app);
    const body = sarif("Semgrep", []);
    const [a, b] = await Promise.all([report(app, triggered.body.id, body), report(app, triggered.body.id, body)]);
    expect([a.status, b.status].sort()).toEqual([202, 409]);
    expect((await report(app, triggered.body.id, body)).body).toMatchObject({ status: 409, code: "conflict" });
    expect(await events(app, "scan.completed")).toBe(1);

    const dast = await trigger(app, "dast");
    const refused = await report(app, dast.body.id, body);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain("SCAN_ENGINES");
    await drain();
    expect((await ext.request("GET", `/applications/${app}/scans/${dast.body.id}`)).body).toMatchObject({
      status: "completed",
      source: { kind: "engine", tool: "simulator" },
    });
  });

  it("refuses a report of another scan type, and answers 404 for another application's scan", async () => {
    const app = await appOn();
    const triggered = await trigger(app);
    const wrongType = await ext.request("POST", `/applications/${app}/scans/${triggered.body.id}/report?scanType=sca`, {
      rawBody: JSON.stringify(sarif("Semgrep", [])),
      headers: { "content-type": "application/json" },
    });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.errors).toEqual([expect.objectContaining({ path: "scanType" })]);
    expect((await report(await appOn(), triggered.body.id, sarif("Semgrep", []))).status).toBe(404);
    expect((await report(app, "not-a-scan", sarif("Semgrep", []))).status).toBe(404);
  });

  it("fails a scan whose report did not arrive within SCAN_EXTERNAL_TIMEOUT_MS, and 409s a late report", async () => {
    const app = await appOn();
    const late = await trigger(app);
    const app2 = await appOn();
    const onTime = await trigger(app2);
    // As if queued 61 s ago: the timeout is 60 s.
    await ext.app.db.prisma.scan.update({
      where: { id: late.body.id },
      data: { createdAt: new Date(Date.now() - 61_000) },
    });
    await drain();
    expect((await ext.request("GET", `/applications/${app}/scans/${late.body.id}`)).body.status).toBe("failed");
    expect((await ext.app.db.prisma.scan.findUniqueOrThrow({ where: { id: late.body.id } })).error).toContain(
      "SCAN_EXTERNAL_TIMEOUT_MS",
    );
    expect(await events(app, "scan.failed")).toBe(1);
    expect((await ext.request("GET", `/applications/${app2}/scans/${onTime.body.id}`)).body.status).toBe("queued");
    expect((await report(app, late.body.id, sarif("Semgrep", []))).status).toBe(409);
  });
});
