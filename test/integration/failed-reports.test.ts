// A report that says its tool failed, or that is not a valid report, never completes a scan nor
// resolves a finding; a report in parts resolves only the parts it covered (issue 60, CONTRACT
// §11, §12). For every format: a failed run, a missing results container, a wrong type at each
// level of the structure and a valid empty report, each against an application that already has
// open findings of that tool: only the valid empty report resolves them.
import {
  cyclonedxBom,
  grypeReport,
  pointerOf,
  REPORT_FORMAT_NAMES,
  replacedAt,
  sarifLog,
  STRUCTURE,
  TOOL_OF,
  trivyReport,
  validReport,
  valueAt,
  wrongTypeFor,
  ZAP_SITE,
  zapReport,
  type ReportFormatName,
} from "../helpers/scanner-reports.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SCAN_DURATION_MS: "0" });
});
afterAll(() => t.close());

let n = 0;
const newApplication = async (on: TestApp = t) =>
  (await on.request("POST", "/applications", { body: { name: `failed-reports-${++n}` } })).body.id as string;

const send = (app: string, body: string, query = "", on: TestApp = t) =>
  on.request("POST", `/applications/${app}/scan-reports${query}`, {
    rawBody: body,
    headers: { "content-type": "application/json" },
  });
const upload = (app: string, report: unknown, query = "", on: TestApp = t) =>
  send(app, JSON.stringify(report), query, on);

const vulnerabilitiesOf = async (app: string, on: TestApp = t) =>
  (await on.request("GET", `/applications/${app}/vulnerabilities?limit=500`)).body as any[];
const statusesOf = async (app: string, on: TestApp = t) =>
  Object.fromEntries((await vulnerabilitiesOf(app, on)).map((v) => [v.location, v.status]));
const eventCount = (app: string, type: string, on: TestApp = t) =>
  on.app.db.prisma.event.count({ where: { applicationId: app, type } });
const scanCount = (app: string, on: TestApp = t) => on.app.db.prisma.scan.count({ where: { applicationId: app } });

/** An application with two open findings of the format's tool, from a valid report. */
async function seeded(format: ReportFormatName): Promise<string> {
  const app = await newApplication();
  const res = await upload(app, validReport(format, [1001, 1002]));
  expect(res.status).toBe(202);
  const vulnerabilities = await vulnerabilitiesOf(app);
  expect(vulnerabilities.map((v) => [v.tool, v.status])).toEqual([
    [TOOL_OF[format], "open"],
    [TOOL_OF[format], "open"],
  ]);
  return app;
}

/** Nothing the upload did changed the application: no scan, no resolved finding, no event of one. */
async function expectUntouched(app: string, scansBefore: number) {
  expect(await scanCount(app)).toBe(scansBefore);
  expect((await vulnerabilitiesOf(app)).map((v) => v.status)).toEqual(["open", "open"]);
  expect(await eventCount(app, "vulnerability.resolved")).toBe(0);
}

/** What each format's failed tool leaves (a SARIF log or a ZAP report that says so; else a cut-off or empty file). */
const FAILED: Record<ReportFormatName, { body: string; status: number; code: string; says?: RegExp }[]> = {
  sarif: [
    {
      body: JSON.stringify(
        sarifLog([{ findings: [], executionSuccessful: false, errorNotification: "Out of memory" }]),
      ),
      status: 422,
      code: "tool_failed",
      says: /executionSuccessful: false.*Out of memory/,
    },
  ],
  cyclonedx: [{ body: JSON.stringify(cyclonedxBom([])).slice(0, 120), status: 400, code: "malformed_json" }],
  trivy: [{ body: "", status: 400, code: "validation_failed" }],
  grype: [{ body: JSON.stringify(grypeReport([])).slice(0, 40), status: 400, code: "malformed_json" }],
  zap: [
    {
      body: JSON.stringify(zapReport([])),
      status: 422,
      code: "tool_failed",
      says: /lists no site/,
    },
  ],
};

/** A report with its results container left out, and how each format reads it. */
const MISSING_CONTAINER: Record<ReportFormatName, { report: unknown; status: number; code?: string }> = {
  // §3.14.23: a run without results is a tool that did not complete its analysis.
  sarif: { report: sarifLog([{ findings: null }]), status: 422, code: "tool_failed" },
  // An inventory no tool analysed: a scan with no findings, which resolves nothing.
  cyclonedx: { report: cyclonedxBom(null), status: 202 },
  // No target scanned (Results is omitempty): a scan with no findings, which resolves nothing.
  trivy: { report: trivyReport(null), status: 202 },
  // Grype always writes `matches`.
  grype: { report: (({ matches: _m, ...rest }) => rest)(grypeReport([])), status: 400, code: "validation_failed" },
  // ZAP's report always has `site`, and each site its `alerts`.
  zap: {
    report: (() => {
      const report = zapReport([{ name: ZAP_SITE, findings: [] }]) as any;
      delete report.site[0].alerts;
      return report;
    })(),
    status: 400,
    code: "validation_failed",
  },
};

// Each case on an application of its own, so that each fails or passes on its own.
describe.each(REPORT_FORMAT_NAMES.map((format) => [format]))("a %s report", (format) => {
  it("left by a failed tool creates no scan and resolves nothing", async () => {
    const app = await seeded(format);
    const scans = await scanCount(app);
    for (const failed of FAILED[format]) {
      const res = await send(app, failed.body, `?format=${format}`);
      expect([res.status, res.body.code]).toEqual([failed.status, failed.code]);
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      if (failed.says) {
        expect(res.body.detail).toMatch(failed.says);
        expect(res.body.errors.length).toBeGreaterThan(0);
        for (const error of res.body.errors) expect(error.path).toMatch(/^\//);
      }
      await expectUntouched(app, scans);
    }
  });

  it("without its results container resolves nothing", async () => {
    const app = await seeded(format);
    let scans = await scanCount(app);
    const { report, status, code } = MISSING_CONTAINER[format];
    const res = await upload(app, report, `?format=${format}`);
    expect(res.status).toBe(status);
    if (code) expect(res.body.code).toBe(code);
    if (status === 202) {
      expect(res.body).toMatchObject({ status: "completed", summary: { totalFindings: 0 } });
      scans++;
    }
    await expectUntouched(app, scans);
  });

  it.each(STRUCTURE[format].map((path) => [pointerOf(path) || "(the document)", path]))(
    "with a wrong type at %s is a 400 naming it, and resolves nothing",
    async (_pointer, path) => {
      const app = await seeded(format);
      const scans = await scanCount(app);
      const report = validReport(format, [1001]);
      const broken = replacedAt(report, path, wrongTypeFor(valueAt(report, path)));
      const res = await upload(app, broken, `?format=${format}`);
      expect([res.status, res.body.code]).toEqual([400, "validation_failed"]);
      const at = pointerOf(path);
      expect(res.body.errors.some((e: { path: string }) => e.path === at || e.path.startsWith(`${at}/`))).toBe(true);
      await expectUntouched(app, scans);
    },
  );

  it("that is valid and empty resolves the tool's open findings, the only one that does", async () => {
    const app = await seeded(format);
    const res = await upload(app, validReport(format, []), `?format=${format}`);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: "completed", summary: { totalFindings: 0 } });
    expect((await vulnerabilitiesOf(app)).map((v) => v.status)).toEqual(["resolved", "resolved"]);
    expect(await eventCount(app, "vulnerability.resolved")).toBe(2);
  });
});

describe("SARIF's runs and their parts", () => {
  const python = { tool: "CodeQL", automationId: "/language:python/" };
  const javascript = { tool: "CodeQL", automationId: "/language:javascript/" };

  it('{version, runs: "nope"} is a 400 pointing at /runs, with or without ?format=', async () => {
    const app = await seeded("sarif");
    for (const query of ["", "?format=sarif"]) {
      const res = await upload(app, { version: "2.1.0", runs: "nope" }, query);
      expect([res.status, res.body.code]).toEqual([400, "validation_failed"]);
      expect(res.body.errors).toContainEqual(expect.objectContaining({ path: "/runs" }));
    }
    await expectUntouched(app, 1);
  });

  it("a run with null results or a failed start, or runs: null, says the tool failed", async () => {
    const app = await seeded("sarif");
    const failedStart = sarifLog([{ findings: [] }]) as any;
    failedStart.runs[0].invocations = [
      { executionSuccessful: false, processStartFailureMessage: "semgrep: not found" },
    ];
    delete failedStart.runs[0].results;
    const nullResults = sarifLog([{ findings: [] }]) as any;
    nullResults.runs[0].results = null;
    const configurationError = sarifLog([{ findings: [1001], executionSuccessful: true }]) as any;
    configurationError.runs[0].invocations[0].toolConfigurationNotifications = [
      { level: "error", message: { text: "Unknown rule set p/nothing" } },
    ];
    for (const [log, says, at] of [
      [failedStart, /failed to start: "semgrep: not found"/, "/runs/0/invocations/0/processStartFailureMessage"],
      [nullResults, /null results/, "/runs/0/results"],
      [
        configurationError,
        /configuration error: "Unknown rule set p\/nothing"/,
        "/runs/0/invocations/0/toolConfigurationNotifications/0",
      ],
      [{ version: "2.1.0", runs: null }, /runs are null/, "/runs"],
    ] as const) {
      const res = await upload(app, log);
      expect([res.status, res.body.code]).toEqual([422, "tool_failed"]);
      expect(res.body.detail).toMatch(says);
      expect(res.body.errors).toContainEqual(expect.objectContaining({ path: at }));
    }
    await expectUntouched(app, 1);
  });

  it("a log with a failed run resolves only the findings of the runs that completed", async () => {
    const app = await newApplication();
    const seed = await upload(
      app,
      sarifLog([
        { ...javascript, findings: [1001], executionSuccessful: true },
        { ...python, findings: [1002], executionSuccessful: true },
      ]),
    );
    expect(seed.status).toBe(202);
    const res = await upload(
      app,
      sarifLog([
        { ...javascript, findings: [], executionSuccessful: true },
        { ...python, findings: [1003], executionSuccessful: false, errorNotification: "Extractor crashed" },
      ]),
    );
    // Completed, by its complete run; the failed run's results are not findings.
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: "completed", summary: { totalFindings: 0 } });
    expect(await statusesOf(app)).toEqual({ "src/module-1001.js:10": "resolved", "src/module-1002.js:10": "open" });
  });

  it("two runs of one part, one of them failed, resolve nothing of that part", async () => {
    const app = await newApplication();
    expect((await upload(app, validReport("sarif", [1001, 1002]))).status).toBe(202);
    const res = await upload(
      app,
      sarifLog([
        { findings: [], executionSuccessful: true },
        { findings: null, executionSuccessful: true },
      ]),
    );
    expect(res.status).toBe(202);
    expect(Object.values(await statusesOf(app))).toEqual(["open", "open"]);
  });

  it("a run left out of the log leaves its part's findings open; the part it has resolves its own", async () => {
    const app = await newApplication();
    await upload(
      app,
      sarifLog([
        { ...javascript, findings: [1001] },
        { ...python, findings: [1002] },
      ]),
    );
    expect((await upload(app, sarifLog([{ ...python, findings: [] }]))).status).toBe(202);
    expect(await statusesOf(app)).toEqual({ "src/module-1001.js:10": "open", "src/module-1002.js:10": "resolved" });
  });

  it("findings recorded before parts were kept are resolved by a complete log, never by one with a failed run", async () => {
    const app = await newApplication();
    await upload(app, validReport("sarif", [1001, 1002]));
    await t.app.db.prisma.vulnerability.updateMany({ where: { applicationId: app }, data: { reportPart: null } });
    const partial = sarifLog([
      { findings: [1001], executionSuccessful: true, automationId: "/a/" },
      { findings: null, automationId: "/b/" },
    ]);
    expect((await upload(app, partial)).status).toBe(202);
    expect(Object.values(await statusesOf(app))).toEqual(["open", "open"]);
    // 1001 was seen again: it belongs to part /a/ now; 1002 has no part, and a complete log resolves it.
    expect((await upload(app, sarifLog([{ findings: [], automationId: "/b/" }]))).status).toBe(202);
    expect(await statusesOf(app)).toEqual({ "src/module-1001.js:10": "open", "src/module-1002.js:10": "resolved" });
  });
});

describe("Trivy's targets and ZAP's sites", () => {
  it("a Trivy report resolves only within the targets it lists", async () => {
    const app = await newApplication();
    await upload(
      app,
      trivyReport([
        { target: "web/package-lock.json", findings: [1001] },
        { target: "api/package-lock.json", findings: [1002] },
      ]),
    );
    const res = await upload(
      app,
      trivyReport([
        { target: "web/package-lock.json", findings: [] },
        // Not about vulnerabilities: it covers none of api's.
        { target: "api/package-lock.json", class: "secret", findings: [] },
      ]),
    );
    expect(res.status).toBe(202);
    const byPackage = Object.fromEntries((await vulnerabilitiesOf(app)).map((v) => [v.packageName, v.status]));
    expect(byPackage).toEqual({ "lib-1001": "resolved", "lib-1002": "open" });
  });

  it("an image's OS packages are one part whatever the image's tag in the target's name", async () => {
    const app = await newApplication();
    await upload(app, trivyReport([{ target: "shop:1.4 (alpine 3.20.3)", class: "os-pkgs", findings: [1001] }]));
    await upload(app, trivyReport([{ target: "shop:1.5 (alpine 3.20.3)", class: "os-pkgs", findings: [] }]));
    expect((await vulnerabilitiesOf(app)).map((v) => v.status)).toEqual(["resolved"]);
  });

  it("a ZAP report resolves only the findings of the sites it lists", async () => {
    const app = await newApplication();
    const other = "https://admin.example.com";
    await upload(
      app,
      zapReport([
        { name: ZAP_SITE, findings: [1001] },
        { name: other, findings: [1002] },
      ]),
    );
    expect((await upload(app, zapReport([{ name: other, findings: [] }]))).status).toBe(202);
    expect(await statusesOf(app)).toEqual({ [`${ZAP_SITE}/page-1001`]: "open", [`${other}/page-1002`]: "resolved" });
  });
});

describe("a failed report for a triggered scan", () => {
  let ext: TestApp;
  beforeAll(async () => {
    ext = await startTestApp({
      SCAN_DURATION_MS: "0",
      SCAN_ENGINES: "sast:external,dast:external",
      SCAN_EXTERNAL_TIMEOUT_MS: "600000",
    });
  });
  afterAll(() => ext.close());

  const triggered = async (app: string, scanType: string) =>
    (await ext.request("POST", `/applications/${app}/scans`, { body: { scanType } })).body.id as string;

  /** An application on `ext` with two open findings of `format`'s tool, from a triggered scan's report. */
  async function seededOnExt(format: "sarif" | "zap", scanType: string) {
    const app = await newApplication(ext);
    const scan = await triggered(app, scanType);
    const res = await ext.request("POST", `/applications/${app}/scans/${scan}/report`, {
      rawBody: JSON.stringify(validReport(format, [1001, 1002])),
      headers: { "content-type": "application/json" },
    });
    expect(res.body.status).toBe("completed");
    return app;
  }

  it.each([
    [
      "sarif",
      "sast",
      sarifLog([{ findings: [1003], executionSuccessful: false, errorNotification: "Out of memory" }]),
      /Out of memory/,
    ],
    ["zap", "dast", zapReport([]), /lists no site/],
  ] as const)(
    "of %s fails that scan with what the report said, and resolves nothing",
    async (format, scanType, report, says) => {
      const app = await seededOnExt(format, scanType);
      const scan = await triggered(app, scanType);
      const res = await ext.request("POST", `/applications/${app}/scans/${scan}/report`, {
        rawBody: JSON.stringify(report),
        headers: { "content-type": "application/json" },
      });
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({
        id: scan,
        status: "failed",
        summary: null,
        source: { kind: "report", format, tool: TOOL_OF[format] },
      });
      expect(res.body.failure.reason).toMatch(says);
      expect((await ext.request("GET", `/applications/${app}/scans/${scan}`)).body).toEqual(res.body);
      expect(await eventCount(app, "scan.failed", ext)).toBe(1);
      expect(await eventCount(app, "scan.completed", ext)).toBe(1); // the seeding scan's
      expect(await eventCount(app, "vulnerability.resolved", ext)).toBe(0);
      expect((await vulnerabilitiesOf(app, ext)).map((v) => v.status)).toEqual(["open", "open"]);
      // It is failed: a second report finds it so.
      const again = await ext.request("POST", `/applications/${app}/scans/${scan}/report`, {
        rawBody: JSON.stringify(validReport(format, [])),
        headers: { "content-type": "application/json" },
      });
      expect(again.status).toBe(409);
    },
  );

  it("an agent's upload for its claimed scan fails it the same way", async () => {
    const app = await seededOnExt("sarif", "sast");
    const scan = await triggered(app, "sast");
    const agent = await ext.token(["scans:run"], "agent-failed-reports");
    const claim = await ext.request("POST", "/scan-jobs/claim", {
      token: agent,
      body: { scanTypes: ["sast"], agent: "ci-runner", leaseSeconds: 300 },
    });
    expect(claim.status).toBe(200);
    expect(claim.body.scan.id).toBe(scan);
    const res = await ext.request("POST", `/applications/${app}/scans/${scan}/report?leaseId=${claim.body.leaseId}`, {
      token: agent,
      rawBody: JSON.stringify(sarifLog([{ findings: null }])),
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      id: scan,
      status: "failed",
      failure: { reason: expect.stringMatching(/no results/) },
    });
    expect(await eventCount(app, "scan.failed", ext)).toBe(1);
    expect(await eventCount(app, "vulnerability.resolved", ext)).toBe(0);
    expect((await vulnerabilitiesOf(app, ext)).map((v) => v.status)).toEqual(["open", "open"]);
  });

  it("a failed report for a scan still queued starts it, then fails it", async () => {
    const app = await newApplication(ext);
    const scan = await triggered(app, "sast");
    const res = await ext.request("POST", `/applications/${app}/scans/${scan}/report`, {
      rawBody: JSON.stringify(sarifLog([{ findings: null }])),
      headers: { "content-type": "application/json" },
    });
    expect(res.body.status).toBe("failed");
    expect(res.body.startedAt).not.toBeNull();
    const types = (
      await ext.app.db.prisma.event.findMany({ where: { applicationId: app, type: { startsWith: "scan." } } })
    ).map((e) => e.type);
    expect(types.sort()).toEqual(["scan.failed", "scan.started"]);
  });
});
