// The scan-job lease API (docs/spec/CONTRACT.md §12) over real HTTP: claims with SKIP LOCKED and long-polling,
// heartbeats, fail and release, lapsed leases back to the queue (and failed after three), the
// report completing an agent's scan with nothing beyond scans:run, and the runner keeping off
// agents' scans.
import { claimScans } from "../../src/domain/scans/scan-lifecycle.ts";
import { itEnforcesAuthRules } from "../helpers/auth-rules.ts";
import { eventually } from "../helpers/scan-engines.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
let agentToken: string;
let otherAgentToken: string;
beforeAll(async () => {
  t = await startTestApp({ SCAN_DURATION_MS: "0", SCAN_ENGINES: "sast:external,sca:external" });
  agentToken = await t.token(["scans:run"], "agent-1");
  otherAgentToken = await t.token(["scans:run"], "agent-2");
});
afterAll(() => t.close());

let n = 0;
const newApplication = async (extra: Record<string, unknown> = {}) =>
  (await t.request("POST", "/applications", { body: { name: `jobs-${++n}`, ...extra } })).body.id as string;
const trigger = async (app: string, scanType = "sast") =>
  (await t.request("POST", `/applications/${app}/scans`, { body: { scanType } })).body;
const claim = (body: Record<string, unknown> = {}, options: { token?: string; query?: string } = {}) =>
  t.request("POST", `/scan-jobs/claim${options.query ?? ""}`, {
    token: options.token ?? agentToken,
    body: { scanTypes: ["sast"], agent: "runner-a", ...body },
  });
const scanRow = (id: string) => t.app.db.prisma.scan.findUniqueOrThrow({ where: { id } });
const eventsOf = (app: string, type: string) => t.app.db.prisma.event.count({ where: { applicationId: app, type } });
/** As if the lease had lapsed a second ago (leases are 30 s at least; no test waits that long). */
const lapse = (id: string) =>
  t.app.db.prisma.$executeRaw`UPDATE scans SET lease_expires_at = now() - interval '1 second' WHERE id = ${id}::uuid`;
/** Claims until the queue has none of `types` left (other tests' leftovers), releasing nothing. */
const drainQueue = async (types: string[]) => {
  while ((await claim({ scanTypes: types }, { token: await t.token(["scans:run"], "drain") })).status === 200);
};
const sarif = (results: { rule: string; file: string; line: number }[]) =>
  JSON.stringify({
    version: "2.1.0",
    runs: [
      {
        tool: { driver: { name: "Semgrep", version: "1.99.0" } },
        results: results.map((r) => ({
          ruleId: r.rule,
          level: "error",
          message: { text: r.rule },
          locations: [{ physicalLocation: { artifactLocation: { uri: r.file }, region: { startLine: r.line } } }],
        })),
      },
    ],
  });
const report = (app: string, scan: string, token: string, query = "") =>
  t.request("POST", `/applications/${app}/scans/${scan}/report${query}`, {
    token,
    rawBody: sarif([{ rule: "js/sqli", file: "src/db.js", line: 7 }]),
    headers: { "content-type": "application/sarif+json" },
  });

describe("claiming", () => {
  beforeEach(() => drainQueue(["sast", "sca"]));

  it("hands out the oldest queued scan of the agent's types, now running with a lease, and 204 when none is left", async () => {
    const app = await newApplication({ repoUrl: "https://git.example.com/team/app.git" });
    const first = await trigger(app, "sca");
    const second = await trigger(app, "sast");
    const before = Date.now();
    const res = await claim({ scanTypes: ["sast", "sca"], leaseSeconds: 120 });
    expect(res.status).toBe(200);
    expect(res.body.scan).toMatchObject({ id: first.id, status: "running", scanType: "sca", failure: null });
    expect(res.body.scan.startedAt).not.toBeNull();
    expect(res.body.application).toMatchObject({ id: app, repoUrl: "https://git.example.com/team/app.git" });
    expect(res.body.leaseId).toMatch(/^[0-9a-f-]{36}$/);
    const expires = Date.parse(res.body.leaseExpiresAt);
    expect(expires).toBeGreaterThanOrEqual(before + 119_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 121_000);
    expect(await eventsOf(app, "scan.started")).toBe(1);
    expect(await scanRow(first.id)).toMatchObject({ agent: "runner-a", leaseOwner: "agent-1", runAttempts: 1 });

    expect((await claim({ scanTypes: ["sast"] })).body.scan.id).toBe(second.id);
    const none = await claim({ scanTypes: ["sast", "sca"] });
    expect(none.status).toBe(204);
    expect(none.text).toBe("");
  });

  it("refuses bad input with problem+json: unknown or non-external types, lease and wait out of range, unknown fields", async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ scanTypes: ["iast"] }, "", "scanTypes[0]"],
      [{ scanTypes: ["sast", "dast"] }, "", "scanTypes[1]"],
      [{ scanTypes: [] }, "", "scanTypes"],
      [{ leaseSeconds: 29 }, "", "leaseSeconds"],
      [{ leaseSeconds: 3601 }, "", "leaseSeconds"],
      [{ leaseSeconds: 60.5 }, "", "leaseSeconds"],
      [{ agent: " " }, "", "agent"],
      [{ colour: "blue" }, "", "colour"],
      [{}, "?waitSeconds=31", "waitSeconds"],
      [{}, "?waitSeconds=-1", "waitSeconds"],
      [{}, "?waitSeconds=soon", "waitSeconds"],
      [{}, "?waitSeconds=1&waitSeconds=2", "waitSeconds"],
    ];
    for (const [body, query, path] of cases) {
      const res = await claim(body, { query });
      expect([JSON.stringify(body) + query, res.status, res.headers.get("content-type")]).toEqual([
        JSON.stringify(body) + query,
        400,
        "application/problem+json",
      ]);
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    }
    const dast = await claim({ scanTypes: ["dast"] });
    expect(dast.body.errors[0].message).toContain("SCAN_ENGINES=dast:external");
    expect((await t.request("POST", "/scan-jobs/claim", { token: agentToken })).status).toBe(400);
  });

  it("long-polls: 204 after waitSeconds when nothing comes, at once when a scan is queued meanwhile", async () => {
    const started = Date.now();
    const empty = await claim({}, { query: "?waitSeconds=1" });
    expect(empty.status).toBe(204);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);

    const app = await newApplication();
    const waiting = claim({}, { query: "?waitSeconds=30" });
    // The claim is waiting once the service listens for queued scans.
    await eventually(
      async () =>
        (
          await t.app.db.pool.query(
            "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE '%LISTEN appsec_scan_queued%'",
          )
        ).rowCount,
    );
    const queuedAt = Date.now();
    const scan = await trigger(app);
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(res.body.scan.id).toBe(scan.id);
    expect(Date.now() - queuedAt).toBeLessThan(5000);
  });

  it("a long poll is answered 204 at once when the service stops, and does not hold up its shutdown", async () => {
    const other = await startTestApp({ SCAN_ENGINES: "sast:external" });
    const waiting = other.request("POST", "/scan-jobs/claim?waitSeconds=30", {
      token: agentToken,
      body: { scanTypes: ["sast"], agent: "a" },
    });
    await eventually(
      async () =>
        (
          await other.app.db.pool.query(
            "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE '%LISTEN appsec_scan_queued%' AND datname = current_database()",
          )
        ).rowCount,
    );
    const stoppedAt = Date.now();
    const [res] = await Promise.all([waiting, other.close()]);
    expect(res.status).toBe(204);
    expect(Date.now() - stoppedAt).toBeLessThan(5000);
  });

  it("two agents racing on 200 queued scans claim each exactly once", async () => {
    const queued: string[] = [];
    for (let i = 0; i < 100; i++) {
      const app = await newApplication();
      queued.push((await trigger(app, "sast")).id, (await trigger(app, "sca")).id);
    }
    const agent = async (token: string, name: string) => {
      const claimed: string[] = [];
      for (;;) {
        const res = await claim({ scanTypes: ["sast", "sca"], agent: name }, { token });
        if (res.status === 204) return claimed;
        expect(res.status).toBe(200);
        claimed.push(res.body.scan.id);
      }
    };
    const [a, b] = await Promise.all([agent(agentToken, "racer-a"), agent(otherAgentToken, "racer-b")]);
    expect([...a, ...b].sort()).toEqual([...queued].sort());
    expect(new Set([...a, ...b]).size).toBe(200);
    expect(a.length).toBeGreaterThan(0);
    expect(b.length).toBeGreaterThan(0);
    const running = await t.app.db.prisma.scan.count({
      where: { id: { in: queued }, status: "running", runAttempts: 1 },
    });
    expect(running).toBe(200);
  }, 60_000);
});

describe("a claimed scan", () => {
  let app: string;
  let scanId: string;
  let leaseId: string;
  beforeEach(async () => {
    await drainQueue(["sast", "sca"]);
    app = await newApplication();
    scanId = (await trigger(app)).id;
    const res = await claim({ leaseSeconds: 60 });
    expect(res.body.scan.id).toBe(scanId);
    leaseId = res.body.leaseId;
  });

  it("heartbeats extend its lease by its length, with or without the leaseId; 409 once it is finished", async () => {
    await t.app.db.prisma
      .$executeRaw`UPDATE scans SET lease_expires_at = now() + interval '5 seconds' WHERE id = ${scanId}::uuid`;
    const beat = await t.request("POST", `/scan-jobs/${scanId}/heartbeat`, { token: agentToken });
    expect(beat.status).toBe(200);
    expect(Date.parse(beat.body.leaseExpiresAt)).toBeGreaterThan(Date.now() + 55_000);
    expect((await scanRow(scanId)).leaseExpiresAt!.toISOString()).toBe(beat.body.leaseExpiresAt);
    expect(
      (await t.request("POST", `/scan-jobs/${scanId}/heartbeat`, { token: agentToken, body: { leaseId } })).status,
    ).toBe(200);

    expect((await report(app, scanId, agentToken)).status).toBe(202);
    const late = await t.request("POST", `/scan-jobs/${scanId}/heartbeat`, { token: agentToken });
    expect(late.status).toBe(409);
    expect(late.headers.get("content-type")).toBe("application/problem+json");
    expect(late.body.detail).toBe("The scan is already completed");
  });

  it("answers 409 to another agent, another claim's leaseId and a lapsed lease; 404 to unknown ids; 400 to bad bodies", async () => {
    const other = await t.request("POST", `/scan-jobs/${scanId}/heartbeat`, { token: otherAgentToken });
    expect([other.status, other.body.detail]).toEqual([
      409,
      "The scan's lease is held by another claim: this one was lost",
    ]);
    const stale = await t.request("POST", `/scan-jobs/${scanId}/heartbeat`, {
      token: agentToken,
      body: { leaseId: "0190a8c6-0000-4000-8000-000000000000" },
    });
    expect(stale.status).toBe(409);
    for (const id of ["0190a8c6-0000-7000-8000-000000000000", "not-a-scan"]) {
      for (const op of ["heartbeat", "release"])
        expect((await t.request("POST", `/scan-jobs/${id}/${op}`, { token: agentToken })).status).toBe(404);
      expect(
        (await t.request("POST", `/scan-jobs/${id}/fail`, { token: agentToken, body: { reason: "x" } })).status,
      ).toBe(404);
    }
    for (const body of [{ leaseId: "nope" }, { extra: 1 }, [1]]) {
      const res = await t.request("POST", `/scan-jobs/${scanId}/heartbeat`, { token: agentToken, body });
      expect([res.status, res.headers.get("content-type")]).toEqual([400, "application/problem+json"]);
    }
    for (const body of [{}, { reason: "" }, { reason: "   " }, { reason: "x".repeat(10_001) }, { reason: 3 }]) {
      expect((await t.request("POST", `/scan-jobs/${scanId}/fail`, { token: agentToken, body })).status).toBe(400);
    }
    await lapse(scanId);
    const lapsed = await t.request("POST", `/scan-jobs/${scanId}/heartbeat`, { token: agentToken });
    expect([lapsed.status, lapsed.body.detail]).toEqual([
      409,
      "The scan's lease expired: it is lost, and the scan goes back to the queue",
    ]);
  });

  it("fails with the agent's reason: failed, failure.reason, scan.failed", async () => {
    const reason = "semgrep exited with code 2 without writing a report:\nerror: invalid config";
    const res = await t.request("POST", `/scan-jobs/${scanId}/fail`, { token: agentToken, body: { reason, leaseId } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: scanId, status: "failed", failure: { reason } });
    expect(res.body.completedAt).not.toBeNull();
    expect((await t.request("GET", `/applications/${app}/scans/${scanId}`)).body.failure).toEqual({ reason });
    expect(await eventsOf(app, "scan.failed")).toBe(1);
    expect(await scanRow(scanId)).toMatchObject({ agent: null, leaseOwner: null, leaseId: null });
    expect((await t.request("POST", `/scan-jobs/${scanId}/fail`, { token: agentToken, body: { reason } })).status).toBe(
      409,
    );
  });

  it("is handed back by release: queued for anyone at once, the claim not counted", async () => {
    const res = await t.request("POST", `/scan-jobs/${scanId}/release`, { token: agentToken, body: { leaseId } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: scanId, status: "queued", startedAt: null });
    expect(await scanRow(scanId)).toMatchObject({ runAttempts: 0, agent: null, leaseOwner: null });
    expect((await t.request("POST", `/scan-jobs/${scanId}/release`, { token: agentToken })).status).toBe(409);
    const again = await claim({}, { token: otherAgentToken });
    expect(again.body.scan.id).toBe(scanId);
    expect(again.body.leaseId).not.toBe(leaseId);
    // The first claim's id no longer fences anything: the scan is another claim's now.
    expect(
      (await t.request("POST", `/scan-jobs/${scanId}/heartbeat`, { token: agentToken, body: { leaseId } })).status,
    ).toBe(409);
  });
});

describe("the report completing a claimed scan", () => {
  beforeEach(() => drainQueue(["sast", "sca"]));

  it("needs nothing beyond scans:run for the scan the agent holds, and emits scan.started once", async () => {
    const app = await newApplication();
    const scan = await trigger(app);
    const { leaseId } = (await claim()).body;
    const res = await report(app, scan.id, agentToken, `?leaseId=${leaseId}`);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      id: scan.id,
      status: "completed",
      summary: { totalFindings: 1, high: 1 },
      source: { kind: "report", tool: "Semgrep" },
    });
    expect(await eventsOf(app, "scan.started")).toBe(1);
    expect(await eventsOf(app, "scan.completed")).toBe(1);
    expect(await scanRow(scan.id)).toMatchObject({ agent: null, leaseOwner: null, leaseExpiresAt: null });
  });

  it("refuses an agent's report for a scan it does not hold (409), and a token with neither scope (403)", async () => {
    const app = await newApplication();
    const queued = await trigger(app, "sca");
    const scan = await trigger(app);
    await claim({ scanTypes: ["sast"] }, { token: otherAgentToken });
    const notMine = await report(app, scan.id, agentToken);
    expect([notMine.status, notMine.body.code]).toEqual([409, "conflict"]);
    const unclaimed = await report(app, queued.id, agentToken);
    expect([unclaimed.status, unclaimed.body.detail]).toEqual([
      409,
      "The scan is queued: no agent holds it (its lease lapsed or was released); claim it again",
    ]);
    const reader = await report(app, scan.id, await t.token(["scans:read"]));
    expect(reader.status).toBe(403);
    expect(reader.headers.get("www-authenticate")).toBe(
      'Bearer error="insufficient_scope", scope="scans:write scans:run"',
    );
    // CI's token (scans:write) completes any external scan, held by an agent or still queued.
    expect((await report(app, scan.id, await t.token(["scans:write"]))).status).toBe(202);
    expect((await report(app, queued.id, await t.token(["scans:write"]))).status).toBe(202);
    expect((await report(app, scan.id, otherAgentToken)).body.detail).toBe("The scan is already completed");
  });
});

describe("lapsed leases", () => {
  beforeEach(() => drainQueue(["sast", "sca"]));

  it("go back to the queue and are claimed again; after 3 lapses the scan fails with a reason", async () => {
    const app = await newApplication();
    const scan = await trigger(app);
    for (let strike = 1; strike <= 3; strike++) {
      const res = await claim({ agent: `crashing-${strike}` });
      expect(res.body.scan.id).toBe(scan.id);
      await lapse(scan.id);
      // The rule runs in the runner's loop (and before every claim).
      await t.app.scanRunner.runOnce();
      const row = await scanRow(scan.id);
      expect(row.status).toBe(strike < 3 ? "queued" : "failed");
      expect(row.startedAt === null).toBe(strike < 3);
    }
    const failed = (await t.request("GET", `/applications/${app}/scans/${scan.id}`)).body;
    expect(failed.failure).toEqual({
      reason: "No agent finished the scan: its lease expired 3 times (last held by agent 'crashing-3')",
    });
    expect(await eventsOf(app, "scan.failed")).toBe(1);
    expect(await eventsOf(app, "scan.started")).toBe(3);
    expect((await claim()).status).toBe(204);
  });

  it("are settled by the next claim too, which then takes the scan", async () => {
    const app = await newApplication();
    const scan = await trigger(app);
    await claim({}, { token: otherAgentToken });
    await lapse(scan.id);
    const res = await claim();
    expect(res.body.scan.id).toBe(scan.id);
    expect(await scanRow(scan.id)).toMatchObject({ leaseOwner: "agent-1", runAttempts: 2 });
  });

  it("are never taken over by the service's own runner, even one that does not know the type is external", async () => {
    const app = await newApplication();
    const scan = await trigger(app);
    await claim();
    await lapse(scan.id);
    // An instance configured without SCAN_ENGINES, claiming as the runner does.
    const taken = await claimScans(t.app.db.prisma, {
      owner: "misconfigured",
      leaseMs: 30_000,
      limit: 10,
      maxAttempts: 3,
      externalScanTypes: [],
    });
    expect(taken.map((s) => s.id)).not.toContain(scan.id);
    await t.app.scanRunner.runOnce();
    expect(await scanRow(scan.id)).toMatchObject({ status: "queued", sourceTool: "external", leaseOwner: null });
    expect(await eventsOf(app, "scan.completed")).toBe(0);
  });

  it("past SCAN_EXTERNAL_TIMEOUT_MS fail the scan rather than queue it again; a held scan is not failed by the timeout", async () => {
    const app = await newApplication();
    const held = await trigger(app, "sca");
    const app2 = await newApplication();
    const lapsing = await trigger(app2, "sca");
    await claim({ scanTypes: ["sca"] });
    await claim({ scanTypes: ["sca"] });
    const longAgo = new Date(Date.now() - 2 * 3_600_000);
    await t.app.db.prisma.scan.updateMany({
      where: { id: { in: [held.id, lapsing.id] } },
      data: { createdAt: longAgo },
    });
    await lapse(lapsing.id);
    await t.app.scanRunner.runOnce();
    expect((await scanRow(held.id)).status).toBe("running");
    const failed = await scanRow(lapsing.id);
    expect(failed.status).toBe("failed");
    expect(failed.error).toContain("SCAN_EXTERNAL_TIMEOUT_MS");
  });
});

describe("scopes", () => {
  itEnforcesAuthRules(
    () => t,
    [
      ["POST", "/scan-jobs/claim", "scans:run", { scanTypes: ["sast"], agent: "a" }],
      ["POST", "/scan-jobs/0190a8c6-0000-7000-8000-000000000000/heartbeat", "scans:run", {}],
      ["POST", "/scan-jobs/0190a8c6-0000-7000-8000-000000000000/fail", "scans:run", { reason: "x" }],
      ["POST", "/scan-jobs/0190a8c6-0000-7000-8000-000000000000/release", "scans:run", {}],
    ],
    "applications:read",
  );

  it("admin includes scans:run; scans:write alone does not claim", async () => {
    await drainQueue(["sast"]);
    expect((await claim({}, { token: await t.token(["admin"]) })).status).toBe(204);
    expect((await claim({}, { token: await t.token(["scans:write", "scans:read"]) })).status).toBe(403);
  });
});
