import { claimScans } from "../../src/domain/scans/scan-lifecycle.ts";
import { SCAN_QUEUED_CHANNEL } from "../../src/domain/scans/scan-queued-channel.ts";
import { AUDIT_EVENT_TYPES } from "../../src/events/catalog.ts";
import { createEngines } from "../../src/scans/engines/create-engines.ts";
import type { Finding, ScannerEngine } from "../../src/scans/engines/engine.ts";
import { createScanRunner, type ScanRunnerOptions } from "../../src/scans/scan-runner.ts";
import { blockingEngine, eventually, failingEngine, finding, scriptedEngine } from "../helpers/scan-engines.ts";
import { gql } from "../helpers/graphql.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SCAN_DURATION_MS: "0" });
});
afterAll(() => t.close());

const prisma = () => t.app.db.prisma;
let n = 0;
async function newApplication(): Promise<string> {
  const res = await t.request("POST", "/applications", { body: { name: `runner-app-${++n}` } });
  return res.body.id;
}
async function queueScan(appId: string, scanType = "sast"): Promise<string> {
  const res = await t.request("POST", `/applications/${appId}/scans`, { body: { scanType } });
  expect(res.status).toBe(202);
  return res.body.id;
}
function runner(sast: ScannerEngine, extra: Partial<ScanRunnerOptions> = {}, dast?: ScannerEngine) {
  return createScanRunner({
    db: prisma(),
    engines: { ...createEngines({ durationMs: 0, overrides: { sast, ...(dast && { dast }) } }) },
    log: t.app.log,
    leaseMs: 30_000,
    ...extra,
  });
}
const scanRow = (id: string) => prisma().scan.findUniqueOrThrow({ where: { id } });
/** The application's events, but for the audit trail's (application.created). */
const eventsOf = (applicationId: string, type?: string) =>
  prisma().event.findMany({
    where: { applicationId, type: type ?? { notIn: [...AUDIT_EVENT_TYPES] } },
    orderBy: { occurredAt: "asc" },
  });
const vulnsOf = (applicationId: string) =>
  prisma()
    .vulnerability.findMany({ where: { applicationId } })
    .then((vs) => new Map(vs.map((v) => [v.fingerprint, v])));

// Each test queues scans on its own application; every runner here only sees those because the
// previous tests drained theirs (runOnce runs what it claims to the end).

describe("recording findings", () => {
  it("dedups rescans, auto-resolves what a scan of the type no longer reports, reopens, keeps accepted", async () => {
    const appId = await newApplication();
    let script: Finding[] = [];
    const r = runner(
      scriptedEngine("sast", () => script),
      {},
      scriptedEngine("dast", () => []),
    );

    script = [finding("a", "low"), finding("b", "high"), finding("c", "medium"), finding("d", "critical")];
    const scan1 = await queueScan(appId);
    expect(await r.runOnce()).toBe(1);
    expect((await scanRow(scan1)).summary).toEqual({ totalFindings: 4, critical: 1, high: 1, medium: 1, low: 1 });
    expect(await eventsOf(appId, "vulnerability.created")).toHaveLength(4);
    let vulns = await vulnsOf(appId);
    expect([...vulns.values()].every((v) => v.status === "open" && v.scanId === scan1)).toBe(true);

    await prisma().vulnerability.update({ where: { id: vulns.get("fp-c")!.id }, data: { status: "accepted" } });
    await prisma().vulnerability.update({ where: { id: vulns.get("fp-d")!.id }, data: { status: "in_progress" } });

    // A scan of another type reports nothing of sast's: nothing of sast's is resolved by it.
    await queueScan(appId, "dast");
    await r.runOnce();
    expect(await eventsOf(appId, "vulnerability.resolved")).toHaveLength(0);

    script = [finding("a", "low"), finding("a", "low"), finding("c", "medium")];
    const scan2 = await queueScan(appId);
    await r.runOnce();
    vulns = await vulnsOf(appId);
    expect((await scanRow(scan2)).summary).toEqual({ totalFindings: 2, critical: 0, high: 0, medium: 1, low: 1 });
    expect(vulns.get("fp-b")!.status).toBe("resolved");
    expect(vulns.get("fp-d")!.status).toBe("resolved");
    expect(vulns.get("fp-c")!.status).toBe("accepted");
    expect(vulns.get("fp-a")!.lastSeenScanId).toBe(scan2);
    const resolved = await eventsOf(appId, "vulnerability.resolved");
    expect(resolved.map((e) => (e.data as { id: string }).id).sort()).toEqual(
      [vulns.get("fp-b")!.id, vulns.get("fp-d")!.id].sort(),
    );
    expect(resolved[0]!.data).toEqual({
      id: expect.any(String),
      severity: expect.any(String),
      applicationId: appId,
      title: expect.any(String),
      createdAt: expect.any(String),
      status: "resolved",
    });
    expect(await eventsOf(appId, "vulnerability.created")).toHaveLength(4);

    script = [finding("a", "low"), finding("b", "high"), finding("d", "critical"), finding("e", "medium")];
    const scan3 = await queueScan(appId);
    await r.runOnce();
    vulns = await vulnsOf(appId);
    expect(vulns.size).toBe(5);
    expect(vulns.get("fp-b")).toMatchObject({ status: "open", scanId: scan1, lastSeenScanId: scan3, resolvedAt: null });
    expect(vulns.get("fp-d")!.status).toBe("open");
    expect(vulns.get("fp-c")!.status).toBe("accepted");
    expect(vulns.get("fp-e")).toMatchObject({ status: "open", scanId: scan3 });
    const created = await eventsOf(appId, "vulnerability.created");
    expect(created).toHaveLength(5);
    expect(created.at(-1)!.data).toEqual({
      id: vulns.get("fp-e")!.id,
      severity: "medium",
      applicationId: appId,
      title: "Finding e",
      createdAt: vulns.get("fp-e")!.createdAt.toISOString(),
    });
    expect(await eventsOf(appId, "vulnerability.resolved")).toHaveLength(2); // nothing new: c is accepted, a was reported
  });

  it("emits scan.started then scan.completed with the scan's data", async () => {
    const appId = await newApplication();
    const scanId = await queueScan(appId);
    await runner(scriptedEngine("sast", () => [finding("x", "critical")])).runOnce();
    const events = (await eventsOf(appId)).filter((e) => e.type.startsWith("scan."));
    expect(events.map((e) => e.type)).toEqual(["scan.started", "scan.completed"]);
    const scan = await scanRow(scanId);
    expect(events[0]!.data).toMatchObject({
      id: scanId,
      status: "running",
      completedAt: null,
      summary: null,
      startedAt: scan.startedAt!.toISOString(),
    });
    expect(events[1]!.data).toEqual({
      id: scanId,
      applicationId: appId,
      scanType: "sast",
      status: "completed",
      triggeredBy: "tester",
      startedAt: scan.startedAt!.toISOString(),
      completedAt: scan.completedAt!.toISOString(),
      summary: { totalFindings: 1, critical: 1, high: 0, medium: 0, low: 0 },
    });
    expect(scan).toMatchObject({ leaseOwner: null, leaseExpiresAt: null, runAttempts: 1 });
  });

  it("fails the scan when its engine throws, and a new scan of the type may then be queued", async () => {
    const appId = await newApplication();
    const scanId = await queueScan(appId);
    await runner(failingEngine("sast", "engine exploded")).runOnce();
    const scan = await scanRow(scanId);
    expect(scan).toMatchObject({ status: "failed", summary: null, error: "engine exploded" });
    expect(scan.completedAt).not.toBeNull();
    const failed = await eventsOf(appId, "scan.failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]!.data).toMatchObject({ id: scanId, status: "failed", summary: null });
    const res = await t.request("GET", `/applications/${appId}/scans/${scanId}`);
    expect(res.body).toMatchObject({ status: "failed", failure: { reason: "engine exploded" } });
    const viaGraphql = await gql(
      t,
      `query ($id: ID!) { application(id: $id) { scans { edges { node { status failure { reason } } } } } }`,
      { id: appId },
    );
    expect(viaGraphql.body.data.application.scans.edges).toEqual([
      { node: { status: "FAILED", failure: { reason: "engine exploded" } } },
    ]);
    await queueScan(appId);
    await runner(failingEngine("sast")).runOnce();
  });
});

describe("transactional outbox", () => {
  it("a completion that fails after writing its events leaves neither its changes nor its events, and is retried", async () => {
    const appId = await newApplication();
    const scanId = await queueScan(appId);
    // Fails the insert of the scan.completed event: by then the completing transaction has written
    // the vulnerabilities, their vulnerability.created events and the scan's new status.
    // (Not a deferred trigger failing at COMMIT: Prisma 6.19's pg adapter then leaks the connection.)
    await prisma().$executeRawUnsafe(`
      CREATE FUNCTION fail_completion() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'injected failure'; END $$`);
    await prisma().$executeRawUnsafe(`
      CREATE TRIGGER fail_completion BEFORE INSERT ON events
      FOR EACH ROW WHEN (NEW.type = 'scan.completed') EXECUTE FUNCTION fail_completion()`);
    const r = runner(scriptedEngine("sast", () => [finding("p", "high"), finding("q", "low")]));
    try {
      await r.runOnce();
      const scan = await scanRow(scanId);
      expect(scan).toMatchObject({
        status: "running",
        summary: null,
        completedAt: null,
        leaseOwner: null,
        runAttempts: 1,
      });
      expect((await eventsOf(appId)).map((e) => e.type)).toEqual(["scan.started"]);
      expect((await vulnsOf(appId)).size).toBe(0);
    } finally {
      await prisma().$executeRawUnsafe(`DROP TRIGGER fail_completion ON events`);
      await prisma().$executeRawUnsafe(`DROP FUNCTION fail_completion`);
    }
    expect(await r.runOnce()).toBe(1);
    expect(await scanRow(scanId)).toMatchObject({ status: "completed", runAttempts: 2 });
    expect((await eventsOf(appId)).map((e) => e.type).sort()).toEqual(
      ["scan.started", "scan.completed", "vulnerability.created", "vulnerability.created"].sort(),
    );
  });
});

describe("leases", () => {
  it("takes over a scan whose runner died once its lease lapses, and completes it", async () => {
    const appId = await newApplication();
    const scanId = await queueScan(appId);
    const [claimed] = await claimScans(prisma(), { owner: "dead-runner", leaseMs: 300, limit: 10, maxAttempts: 3 });
    expect(claimed!.id).toBe(scanId);
    expect(await scanRow(scanId)).toMatchObject({ status: "running", leaseOwner: "dead-runner" });

    const b = runner(scriptedEngine("sast", () => [finding("t")]));
    expect(await b.runOnce()).toBe(0); // the lease still holds
    await eventually(async () => (await b.runOnce()) > 0, 5000);
    const scan = await scanRow(scanId);
    expect(scan).toMatchObject({ status: "completed", runAttempts: 2, leaseOwner: null });
    expect(scan.startedAt!.getTime()).toBe(claimed!.startedAt!.getTime());
    expect(await eventsOf(appId, "scan.started")).toHaveLength(1);
    expect(await eventsOf(appId, "scan.completed")).toHaveLength(1);
  });

  it("a runner that lost its lease cannot complete the scan its successor now owns", async () => {
    const appId = await newApplication();
    const scanId = await queueScan(appId);
    const stalled = blockingEngine("sast", [finding("stale-1"), finding("stale-2")]);
    const a = runner(stalled.engine, { leaseMs: 300, renewEveryMs: 3_600_000 }); // never renews: a stalled process
    const aRun = a.runOnce();
    await eventually(async () => stalled.started.length > 0);

    const b = runner(scriptedEngine("sast", () => [finding("fresh")]));
    await eventually(async () => (await b.runOnce()) > 0, 5000);
    stalled.release();
    await aRun;

    expect((await scanRow(scanId)).summary).toMatchObject({ totalFindings: 1 });
    expect([...(await vulnsOf(appId)).keys()]).toEqual(["fp-fresh"]);
    expect(await eventsOf(appId, "scan.completed")).toHaveLength(1);
  });

  it("renews the lease of a long scan so no other runner takes it", async () => {
    const appId = await newApplication();
    const scanId = await queueScan(appId);
    const slow = blockingEngine("sast");
    const a = runner(slow.engine, { leaseMs: 400, renewEveryMs: 100 });
    const aRun = a.runOnce();
    await eventually(async () => slow.started.length > 0);
    const firstExpiry = (await scanRow(scanId)).leaseExpiresAt!;
    // Wait (bounded) until the first lease would have lapsed by the database's clock.
    await eventually(async () => {
      const [row] = await prisma().$queryRaw<
        { lapsed: boolean }[]
      >`SELECT now() > ${firstExpiry}::timestamptz + interval '100 ms' AS lapsed`;
      return row!.lapsed;
    });
    expect((await scanRow(scanId)).leaseExpiresAt!.getTime()).toBeGreaterThan(firstExpiry.getTime());
    expect(await runner(scriptedEngine("sast", () => [])).runOnce()).toBe(0);
    slow.release();
    await aRun;
    expect(await scanRow(scanId)).toMatchObject({ status: "completed", runAttempts: 1 });
  });

  it("fails a scan whose runners died too often instead of retrying it forever", async () => {
    const appId = await newApplication();
    const scanId = await queueScan(appId);
    for (let i = 0; i < 3; i++) {
      expect(
        await claimScans(prisma(), { owner: `dead-${i}`, leaseMs: 30_000, limit: 10, maxAttempts: 3 }),
      ).toHaveLength(1);
      // Time passes: the lease lapses.
      await prisma().scan.update({ where: { id: scanId }, data: { leaseExpiresAt: new Date(Date.now() - 1000) } });
    }
    expect(await runner(scriptedEngine("sast", () => [finding("never")])).runOnce()).toBe(0);
    const scan = await scanRow(scanId);
    expect(scan).toMatchObject({ status: "failed", error: "Gave up after 3 attempts", leaseOwner: null });
    expect(await eventsOf(appId, "scan.failed")).toHaveLength(1);
    expect((await vulnsOf(appId)).size).toBe(0);
  });

  it("stop() aborts the engine and hands the scan back at once, without counting the attempt", async () => {
    const appId = await newApplication();
    const scanId = await queueScan(appId);
    const slow = blockingEngine("sast");
    const a = runner(slow.engine);
    const aRun = a.runOnce();
    await eventually(async () => slow.started.length > 0);
    await a.stop();
    await aRun;
    expect(await scanRow(scanId)).toMatchObject({
      status: "running",
      leaseOwner: null,
      leaseExpiresAt: null,
      runAttempts: 0,
    });
    expect(await a.runOnce()).toBe(0); // a stopped runner takes nothing

    expect(await runner(scriptedEngine("sast", () => [finding("after-restart")])).runOnce()).toBe(1);
    expect(await scanRow(scanId)).toMatchObject({ status: "completed", runAttempts: 1 });
    expect(await eventsOf(appId, "scan.started")).toHaveLength(1);
  });

  it("drops the work quietly when the application is deleted mid-scan", async () => {
    const appId = await newApplication();
    const scanId = await queueScan(appId);
    const slow = blockingEngine("sast");
    const a = runner(slow.engine);
    const aRun = a.runOnce();
    await eventually(async () => slow.started.length > 0);
    expect((await t.request("DELETE", `/applications/${appId}`)).status).toBe(204);
    slow.release();
    await expect(aRun).resolves.toBe(1);
    expect(await prisma().scan.findUnique({ where: { id: scanId } })).toBeNull();
    expect(await prisma().vulnerability.count({ where: { applicationId: appId } })).toBe(0);
    expect(await eventsOf(appId, "scan.completed")).toHaveLength(0);
  });
});

describe("the background loop", () => {
  it("wakes on NOTIFY when a scan is queued and runs it", async () => {
    const appId = await newApplication();
    const r = runner(
      scriptedEngine("sast", () => [finding("notified")]),
      { listenOn: t.app.db.listenOn, pollIntervalMs: 3_600_000 },
    );
    r.start();
    try {
      // Let the start-up round and the LISTEN settle, so only the NOTIFY can pick the scan up.
      await eventually(
        async () =>
          (
            await prisma().$queryRaw<
              { n: bigint }[]
            >`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`
          )[0]!.n > 0n,
      );
      const scanId = await queueScan(appId);
      await eventually(async () => (await scanRow(scanId)).status === "completed");
    } finally {
      await r.stop();
    }
  });
});

describe("the background loop after its LISTEN connection is lost", () => {
  it("reconnects and wakes on NOTIFY again", async () => {
    const appId = await newApplication();
    const r = runner(
      scriptedEngine("sast", () => [finding("renotified")]),
      { listenOn: t.app.db.listenOn, pollIntervalMs: 3_600_000 },
    );
    const listeners = async () =>
      (
        await prisma().$queryRaw<
          { pid: number }[]
        >`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE ${`LISTEN ${SCAN_QUEUED_CHANNEL}%`}`
      ).map((row) => row.pid);
    r.start();
    try {
      const [first] = await eventually(async () => ((await listeners()).length > 0 ? await listeners() : undefined));
      await prisma().$queryRaw`SELECT pg_terminate_backend(${first}::int)`;
      await eventually(async () => (await listeners()).some((pid) => pid !== first));
      const scanId = await queueScan(appId);
      await eventually(async () => (await scanRow(scanId)).status === "completed");
    } finally {
      await r.stop();
    }
  });
});
