import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SCAN_DURATION_MS: "0" });
});
afterAll(() => t.close());

let n = 0;
async function newApplication(): Promise<string> {
  const res = await t.request("POST", "/applications", { body: { name: `scan-app-${++n}`, language: "typescript" } });
  expect(res.status).toBe(201);
  return res.body.id;
}
const trigger = (appId: string, body: unknown, token?: string) =>
  t.request("POST", `/applications/${appId}/scans`, { body, token });
/** Runs every claimable scan (other tests leave queued ones behind). */
async function drain(): Promise<void> {
  while ((await t.app.scanRunner.runOnce()) > 0);
}
const UNKNOWN_ID = "01900000-0000-7000-8000-000000000000";

describe("TriggerApplicationScan", () => {
  it("answers 202 with a queued scan and a Location that serves it", async () => {
    const appId = await newApplication();
    const res = await trigger(appId, { scanType: "sast", triggeredBy: "ci-pipeline" });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      id: expect.any(String),
      applicationId: appId,
      scanType: "sast",
      status: "queued",
      triggeredBy: "ci-pipeline",
      startedAt: null,
      completedAt: null,
      summary: null,
      createdAt: expect.any(String),
      source: { kind: "engine", format: null, tool: "simulator", toolVersion: null },
      failure: null,
    });
    expect(res.headers.get("location")).toBe(`/applications/${appId}/scans/${res.body.id}`);
    const got = await t.request("GET", res.headers.get("location")!);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it("defaults triggeredBy to the token's subject", async () => {
    const appId = await newApplication();
    const res = await trigger(appId, { scanType: "dast" }, await t.token(["scans:write"], "alice"));
    expect(res.status).toBe(202);
    expect(res.body.triggeredBy).toBe("alice");
  });

  it.each([
    [{}, "scanType"],
    [{ scanType: "fuzz" }, "scanType"],
    [{ scanType: 1 }, "scanType"],
    [{ scanType: "SAST" }, "scanType"],
    [{ scanType: "sast", triggeredBy: 42 }, "triggeredBy"],
    [{ scanType: "sast", triggeredBy: "x".repeat(201) }, "triggeredBy"],
    [{ scanType: "sast", colour: "blue" }, "colour"],
    [["sast"], ""],
    ["sast", ""],
    [null, ""],
  ])("answers 400 for %j", async (body, path) => {
    const appId = await newApplication();
    const res = await trigger(appId, body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("validation_failed");
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it("answers 400 for malformed JSON and for no body", async () => {
    const appId = await newApplication();
    const bad = await t.request("POST", `/applications/${appId}/scans`, {
      rawBody: "{",
      headers: { "content-type": "application/json" },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("malformed_json");
    expect((await t.request("POST", `/applications/${appId}/scans`)).status).toBe(400);
  });

  it("accepts triggeredBy of exactly 200 characters", async () => {
    const res = await trigger(await newApplication(), { scanType: "sca", triggeredBy: "x".repeat(200) });
    expect(res.status).toBe(202);
  });

  it("answers 404 for an unknown or malformed application id", async () => {
    expect((await trigger(UNKNOWN_ID, { scanType: "sast" })).status).toBe(404);
    const res = await trigger("not-an-id", { scanType: "sast" });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("not_found");
  });

  it("answers 409 while a scan of the same type is queued or running, and not for another type", async () => {
    const appId = await newApplication();
    expect((await trigger(appId, { scanType: "sca" })).status).toBe(202);
    const again = await trigger(appId, { scanType: "sca" });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("conflict");
    expect((await trigger(appId, { scanType: "container" })).status).toBe(202);

    await drain();
    expect((await trigger(appId, { scanType: "sca" })).status).toBe(202);
  });

  it("lets exactly one of 50 concurrent triggers of one type win", async () => {
    const appId = await newApplication();
    const results = await Promise.all(Array.from({ length: 50 }, () => trigger(appId, { scanType: "sast" })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(49);
    expect(await t.app.db.prisma.scan.count({ where: { applicationId: appId } })).toBe(1);
  });

  it("needs scans:write", async () => {
    const appId = await newApplication();
    const res = await trigger(appId, { scanType: "sast" }, await t.token(["scans:read"]));
    expect(res.status).toBe(403);
    expect(res.headers.get("www-authenticate")).toContain('scope="scans:write"');
    expect((await trigger(appId, { scanType: "sast" }, null as unknown as string)).status).toBe(401);
  });
});

describe("scan lifecycle through REST", () => {
  it("runs two types side by side, queued then completed with a summary matching the vulnerabilities", async () => {
    const appId = await newApplication();
    const sast = await trigger(appId, { scanType: "sast" });
    const sca = await trigger(appId, { scanType: "sca" });
    expect([sast.status, sca.status]).toEqual([202, 202]);
    const listed = await t.request("GET", `/applications/${appId}/scans`);
    expect(listed.body.map((s: { status: string }) => s.status)).toEqual(["queued", "queued"]);

    await drain();

    for (const scan of [sast.body, sca.body]) {
      const done = (await t.request("GET", `/applications/${appId}/scans/${scan.id}`)).body;
      expect(done.status).toBe("completed");
      expect(Date.parse(done.startedAt)).toBeLessThanOrEqual(Date.parse(done.completedAt));
      const reported = await t.app.db.prisma.vulnerability.findMany({ where: { lastSeenScanId: scan.id } });
      const count = (sev: string) => reported.filter((v) => v.severity === sev).length;
      expect(done.summary).toEqual({
        totalFindings: reported.length,
        critical: count("critical"),
        high: count("high"),
        medium: count("medium"),
        low: count("low"),
      });
      expect(done.summary.totalFindings).toBeGreaterThan(0);
    }

    const vulns = await t.request("GET", `/applications/${appId}/vulnerabilities`);
    expect(vulns.status).toBe(200);
    expect(vulns.body.length).toBeGreaterThan(0);
    const v = vulns.body[0];
    expect(Object.keys(v)).toEqual(
      expect.arrayContaining([
        "id",
        "applicationId",
        "scanId",
        "title",
        "description",
        "severity",
        "cwe",
        "cve",
        "cvssScore",
        "status",
        "introducedIn",
        "remediation",
        "createdAt",
        "updatedAt",
      ]),
    );
    expect(v.status).toBe("open");
    expect(v.cwe).toMatch(/^CWE-\d+$/);
    expect([sast.body.id, sca.body.id]).toContain(v.scanId);
  });
});

describe("ListApplicationScans and GET scan", () => {
  it("lists newest first with a Link to the next page", async () => {
    const appId = await newApplication();
    const ids: string[] = [];
    for (const scanType of ["sast", "dast", "sca", "container"]) ids.push((await trigger(appId, { scanType })).body.id);
    const first = await t.request("GET", `/applications/${appId}/scans?limit=3`);
    expect(first.status).toBe(200);
    expect(first.body.map((s: { id: string }) => s.id)).toEqual(ids.slice(1).reverse());
    const next = first.headers.get("link")!.match(/<([^>]+)>; rel="next"/)![1]!;
    const second = await t.request("GET", new URL(next).pathname + new URL(next).search);
    expect(second.body.map((s: { id: string }) => s.id)).toEqual([ids[0]]);
    expect(second.headers.get("link")).toBeNull();
  });

  it("answers 404 for an unknown application, 404 for an unknown or foreign scan, 400 for a bad limit", async () => {
    const appId = await newApplication();
    const other = await newApplication();
    const scan = (await trigger(other, { scanType: "sast" })).body;
    expect((await t.request("GET", `/applications/${UNKNOWN_ID}/scans`)).status).toBe(404);
    expect((await t.request("GET", `/applications/nope/scans`)).status).toBe(404);
    expect((await t.request("GET", `/applications/${appId}/scans/${UNKNOWN_ID}`)).status).toBe(404);
    expect((await t.request("GET", `/applications/${appId}/scans/nope`)).status).toBe(404);
    expect((await t.request("GET", `/applications/${appId}/scans/${scan.id}`)).status).toBe(404);
    expect((await t.request("GET", `/applications/${other}/scans/${scan.id}`)).status).toBe(200);
    expect((await t.request("GET", `/applications/${appId}/scans?limit=0`)).status).toBe(400);
  });

  it("needs scans:read", async () => {
    const appId = await newApplication();
    const token = await t.token(["scans:write"]);
    expect((await t.request("GET", `/applications/${appId}/scans`, { token })).status).toBe(403);
    expect(
      (await t.request("GET", `/applications/${appId}/scans`, { token: await t.token(["scans:read"]) })).status,
    ).toBe(200);
  });
});

describe("ListApplicationVulnerabilities", () => {
  let appId: string;
  beforeAll(async () => {
    appId = await newApplication();
    await trigger(appId, { scanType: "sast" });
    await trigger(appId, { scanType: "container" });
    await drain();
  });

  it("filters by severity and status (AND)", async () => {
    const all = (await t.request("GET", `/applications/${appId}/vulnerabilities`)).body as {
      severity: string;
      status: string;
    }[];
    for (const severity of ["low", "medium", "high", "critical"]) {
      const res = await t.request("GET", `/applications/${appId}/vulnerabilities?severity=${severity}&status=open`);
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(all.filter((v) => v.severity === severity && v.status === "open").length);
      expect(res.body.every((v: { severity: string }) => v.severity === severity)).toBe(true);
    }
    expect((await t.request("GET", `/applications/${appId}/vulnerabilities?status=accepted`)).body).toEqual([]);
  });

  it("pages with a Link that keeps the filters", async () => {
    const res = await t.request("GET", `/applications/${appId}/vulnerabilities?status=open&limit=2`);
    expect(res.body).toHaveLength(2);
    expect(res.headers.get("link")).toMatch(/status=open/);
  });

  it.each(["severity=severe", "severity=HIGH", "status=closed", "status=", "limit=501"])(
    "answers 400 for %s",
    async (q) => {
      const res = await t.request("GET", `/applications/${appId}/vulnerabilities?${q}`);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("validation_failed");
    },
  );

  it("answers 404 for unknown and malformed application ids, and needs vulnerabilities:read", async () => {
    expect((await t.request("GET", `/applications/${UNKNOWN_ID}/vulnerabilities`)).status).toBe(404);
    expect((await t.request("GET", `/applications/xyz/vulnerabilities`)).status).toBe(404);
    const token = await t.token(["scans:read"]);
    expect((await t.request("GET", `/applications/${appId}/vulnerabilities`, { token })).status).toBe(403);
  });
});
