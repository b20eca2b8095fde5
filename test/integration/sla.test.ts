// Remediation deadlines (docs/spec/CONTRACT.md §19): the SLA's document and its validation, `sla` on
// every vulnerability (REST and GraphQL) with its clock paused while accepted, and
// vulnerability.sla_breached told within a tick of the deadline, exactly once, by two instances on
// one database, and again only when a change of the SLA moved the deadline back into the future.
import { setTimeout as sleep } from "node:timers/promises";
import { createDeadlineWatcher } from "../../src/domain/sla/deadline-watcher.ts";
import { eventually } from "../helpers/scan-engines.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";
import { cyclonedxReport, openVex, statement, type ScannedVulnerability } from "../helpers/vex-documents.ts";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SCAN_DURATION_MS: "0" });
});
afterAll(() => t.close());
afterEach(async () => {
  expect((await t.request("PUT", "/sla", { body: {} })).status).toBe(200);
});

const DAY_MS = 86_400_000;
const LOG4J = "pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1?type=jar";
const LODASH = "pkg:npm/lodash@4.17.20";
const CRITICAL: ScannedVulnerability = { id: "CVE-2021-44228", purl: LOG4J, severity: "critical" };
const HIGH: ScannedVulnerability = { id: "CVE-2021-23337", purl: LODASH, severity: "high" };

let n = 0;
async function scannedApplication(criticality = "medium", findings = [CRITICAL, HIGH]) {
  const created = await t.request("POST", "/applications", { body: { name: `sla-${++n}`, criticality } });
  const app = created.body.id as string;
  const res = await t.request("POST", `/applications/${app}/scan-reports`, {
    rawBody: JSON.stringify(cyclonedxReport(findings)),
    headers: { "content-type": "application/vnd.cyclonedx+json" },
  });
  expect(res.status).toBe(202);
  return app;
}

const vulnerabilitiesOf = async (app: string) => {
  const res = await t.request("GET", `/applications/${app}/vulnerabilities`);
  expect(res.status).toBe(200);
  return Object.fromEntries((res.body as any[]).map((v) => [v.severity, v]));
};

const breachesOf = (app: string) =>
  t.app.db.prisma.event.findMany({ where: { applicationId: app, type: "vulnerability.sla_breached" } });

const watcher = () => createDeadlineWatcher({ pool: t.app.db.pool, log: t.app.log });

describe("the SLA's document", () => {
  it("has DefectDojo's defaults, and PUT replaces it whole: what it omits takes them", async () => {
    expect((await t.request("GET", "/sla")).body).toEqual({
      days: { critical: 7, high: 30, medium: 90, low: 120 },
      byCriticality: {},
      dueSoonDays: 3,
    });
    const put = await t.request("PUT", "/sla", {
      body: { days: { critical: 0.5 }, byCriticality: { critical: { critical: 1.5 } } },
    });
    expect(put.status).toBe(200);
    const expected = {
      days: { critical: 0.5, high: 30, medium: 90, low: 120 },
      byCriticality: { critical: { critical: 1.5 } },
      dueSoonDays: 3,
    };
    expect(put.body).toEqual(expected);
    expect((await t.request("GET", "/sla")).body).toEqual(expected);
  });

  it.each([
    [{ days: { critical: -1 } }, "days.critical"],
    [{ days: { critical: 0 } }, "days.critical"],
    [{ days: { high: "30" } }, "days.high"],
    [{ days: { urgent: 3 } }, "days.urgent"],
    [{ byCriticality: { vital: { high: 3 } } }, "byCriticality.vital"],
    [{ byCriticality: { high: { urgent: 3 } } }, "byCriticality.high.urgent"],
    [{ dueSoonDays: -2 }, "dueSoonDays"],
    [{ grace: 1 }, "grace"],
  ])("answers 400 with the path to %j", async (body, path) => {
    const res = await t.request("PUT", "/sla", { body });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it("is changed only with policies:write, and read with vulnerabilities:read", async () => {
    const reader = await t.token(["vulnerabilities:read"]);
    expect((await t.request("GET", "/sla", { token: reader })).status).toBe(200);
    expect((await t.request("PUT", "/sla", { token: reader, body: {} })).status).toBe(403);
    expect((await t.request("GET", "/sla", { token: await t.token(["scans:read"]) })).status).toBe(403);
  });
});

describe("a vulnerability's sla", () => {
  it("is due its severity's days after it was first found, by its application's criticality", async () => {
    await t.request("PUT", "/sla", { body: { byCriticality: { high: { high: 10 } } } });
    const medium = await vulnerabilitiesOf(await scannedApplication("medium"));
    const high = await vulnerabilitiesOf(await scannedApplication("high"));
    const dueAfter = (v: { createdAt: string; sla: { dueAt: string } }) =>
      (Date.parse(v.sla.dueAt) - Date.parse(v.createdAt)) / DAY_MS;
    expect(dueAfter(medium.critical)).toBe(7);
    expect(dueAfter(medium.high)).toBe(30);
    expect(dueAfter(high.critical)).toBe(7);
    expect(dueAfter(high.high)).toBe(10);
    expect(medium.critical.sla.state).toBe("on_track");
  });

  it("is due soon, then breached, as the SLA changes, without a vulnerability rewritten", async () => {
    const app = await scannedApplication();
    const before = await vulnerabilitiesOf(app);
    await t.request("PUT", "/sla", { body: { days: { critical: 2 }, dueSoonDays: 3 } });
    const dueSoon = await vulnerabilitiesOf(app);
    expect(dueSoon.critical.sla.state).toBe("due_soon");
    expect(dueSoon.critical.updatedAt).toBe(before.critical.updatedAt);
    await t.request("PUT", "/sla", { body: { days: { critical: 1 / 86_400_000 } } });
    expect((await vulnerabilitiesOf(app)).critical.sla.state).toBe("breached");
    expect((await vulnerabilitiesOf(app)).high.sla.state).toBe("on_track");
  });

  it("is paused while accepted, and resumes later by the time spent accepted", async () => {
    const app = await scannedApplication();
    const found = await vulnerabilitiesOf(app);
    const vex = (status: string) =>
      t.request("POST", `/applications/${app}/vex`, {
        rawBody: JSON.stringify(
          openVex([statement(CRITICAL.id, status, { products: [{ "@id": LOG4J }] })], new Date().toISOString()),
        ),
        headers: { "content-type": "application/json" },
      });
    expect((await vex("not_affected")).status).toBe(200);
    expect((await vulnerabilitiesOf(app)).critical.sla).toEqual({ dueAt: null, state: "paused" });
    await sleep(300);
    expect((await vex("under_investigation")).status).toBe(200);
    const resumed = (await vulnerabilitiesOf(app)).critical;
    expect(resumed.status).toBe("in_progress");
    const paused = Date.parse(resumed.sla.dueAt) - Date.parse(found.critical.sla.dueAt);
    expect(paused).toBeGreaterThanOrEqual(300);
    expect(paused).toBeLessThan(10_000);
  });

  it("is the same in GraphQL", async () => {
    const app = await scannedApplication();
    const rest = await vulnerabilitiesOf(app);
    const res = await t.request("POST", "/graphql", {
      body: {
        query: `query ($id: ID!) { application(id: $id) {
          vulnerabilities(first: 10) { edges { node { severity sla { dueAt state } } } }
          vulnerability(id: "${rest.critical.id}") { sla { dueAt state } } } }`,
        variables: { id: app },
      },
    });
    expect(res.body.errors).toBeUndefined();
    const nodes = res.body.data.application.vulnerabilities.edges.map((e: any) => e.node);
    expect(nodes).toHaveLength(2);
    for (const node of nodes) {
      const v = rest[node.severity.toLowerCase()];
      expect(node.sla).toEqual({ dueAt: v.sla.dueAt, state: v.sla.state.toUpperCase() });
    }
    expect(res.body.data.application.vulnerability.sla.dueAt).toBe(rest.critical.sla.dueAt);
  });
});

describe("filters and counts by SLA state", () => {
  it("lists by sla= (REST and GraphQL) and counts the breached, as the views say", async () => {
    const app = await scannedApplication("high");
    // critical: breached at once; high: due soon (2 days of its 3-day window left).
    await t.request("PUT", "/sla", { body: { days: { critical: 1e-9 }, byCriticality: { high: { high: 2 } } } });
    const ids = async (sla: string) => {
      const res = await t.request("GET", `/applications/${app}/vulnerabilities?sla=${sla}`);
      expect(res.status).toBe(200);
      return (res.body as any[]).map((v) => `${v.severity} ${v.sla.state}`);
    };
    expect(await ids("breached")).toEqual(["critical breached"]);
    expect(await ids("due_soon")).toEqual(["high due_soon"]);
    expect(await ids("on_track")).toEqual([]);
    const bad = await t.request("GET", `/applications/${app}/vulnerabilities?sla=late`);
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { path: string }) => e.path)).toEqual(["sla"]);
    const res = await t.request("POST", "/graphql", {
      body: {
        query: `query ($id: ID!) { application(id: $id) {
          vulnerabilityCounts { breached }
          vulnerabilities(first: 10, filter: { sla: BREACHED }) { totalCount edges { node { severity } } } } }`,
        variables: { id: app },
      },
    });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.application).toEqual({
      vulnerabilityCounts: { breached: 1 },
      vulnerabilities: { totalCount: 1, edges: [{ node: { severity: "CRITICAL" } }] },
    });
  });
});

describe("vulnerability.sla_breached", () => {
  it("is told within a tick of the deadline, exactly once, with the vulnerability's fields and its dueAt", async () => {
    const app = await scannedApplication();
    const { critical } = await vulnerabilitiesOf(app);
    // Due 1.5 s after it was found (fractions of days are allowed).
    const days = (Date.parse(critical.createdAt) + 1_500 - Date.now()) / DAY_MS;
    await t.request("PUT", "/sla", { body: { days: { critical: Math.max(days, 1e-9) } } });
    const w = watcher();
    const told = await eventually(async () => {
      await w.runOnce();
      return (await breachesOf(app)).length > 0 && Date.now();
    }, 10_000);
    const [breach, ...more] = await breachesOf(app);
    expect(more).toEqual([]);
    const dueAt = (await vulnerabilitiesOf(app)).critical.sla.dueAt;
    expect(breach!.data).toEqual({
      id: critical.id,
      severity: "critical",
      applicationId: app,
      title: critical.title,
      createdAt: critical.createdAt,
      dueAt,
    });
    expect(told).toBeGreaterThanOrEqual(Date.parse(dueAt));
    await w.runOnce();
    expect(await breachesOf(app)).toHaveLength(1);
  });

  it("is told once by two instances on one database", async () => {
    const apps = await Promise.all([1, 2, 3].map(() => scannedApplication()));
    const second = await startTestApp({ SCAN_DURATION_MS: "0" }, { database: t.database });
    try {
      await t.request("PUT", "/sla", { body: { days: { critical: 1e-9, high: 1e-9 } } });
      const watchers = [watcher(), createDeadlineWatcher({ pool: second.app.db.pool, log: second.app.log })];
      const told = await Promise.all(watchers.flatMap((w) => [w.runOnce(), w.runOnce()]));
      expect(told.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(6);
      for (const app of apps) {
        const breaches = await breachesOf(app);
        expect(breaches.map((e) => (e.data as { severity: string }).severity).sort()).toEqual(["critical", "high"]);
      }
    } finally {
      await second.close();
    }
  });

  it("is told again only after a change of the SLA moved the deadline back into the future", async () => {
    const app = await scannedApplication("medium", [CRITICAL]);
    await t.request("PUT", "/sla", { body: { days: { critical: 1e-9 } } });
    const w = watcher();
    await eventually(async () => (await breachesOf(app)).length === 1 || (await w.runOnce(), false));
    // Still in the past: no new crossing.
    await t.request("PUT", "/sla", { body: { days: { critical: 2e-9 } } });
    await w.runOnce();
    expect(await breachesOf(app)).toHaveLength(1);
    // Back into the future: no longer breached, and nothing told.
    await t.request("PUT", "/sla", { body: { days: { critical: 30 } } });
    expect((await vulnerabilitiesOf(app)).critical.sla.state).toBe("on_track");
    await w.runOnce();
    expect(await breachesOf(app)).toHaveLength(1);
    // Into the past again: a second crossing.
    await t.request("PUT", "/sla", { body: { days: { critical: 1e-9 } } });
    await w.runOnce();
    expect(await breachesOf(app)).toHaveLength(2);
  });

  it("is told by the days in force: a change of the SLA under way is waited for, not raced", async () => {
    const app = await scannedApplication("medium", [CRITICAL]);
    await t.request("PUT", "/sla", { body: { days: { critical: 1e-9 } } });
    // A change of the SLA in its transaction, not yet committed, when the watcher's tick begins.
    const change = await t.app.db.pool.connect();
    try {
      await change.query("BEGIN");
      await change.query("SELECT document FROM sla_settings FOR UPDATE");
      const tick = watcher().runOnce();
      await sleep(300);
      await change.query(`UPDATE sla_settings SET document = jsonb_set(document, '{days,critical}', '30')`);
      await change.query("COMMIT");
      expect(await tick).toBe(0);
    } finally {
      change.release();
    }
    expect(await breachesOf(app)).toEqual([]);
    expect((await vulnerabilitiesOf(app)).critical.sla.state).toBe("on_track");
  });

  it("follows its application's criticality: a change of it moves the deadline, told again after it came back", async () => {
    const app = await scannedApplication("medium", [CRITICAL]);
    await t.request("PUT", "/sla", { body: { byCriticality: { critical: { critical: 1e-9 } } } });
    const w = watcher();
    await w.runOnce();
    expect(await breachesOf(app)).toEqual([]);
    expect((await t.request("PUT", `/applications/${app}`, { body: { criticality: "critical" } })).status).toBe(200);
    expect((await vulnerabilitiesOf(app)).critical.sla.state).toBe("breached");
    await w.runOnce();
    expect(await breachesOf(app)).toHaveLength(1);
    // Back to a criticality whose deadline is to come, then again one whose deadline has passed: a
    // second crossing, told again.
    await t.request("PUT", `/applications/${app}`, { body: { criticality: "medium" } });
    expect((await vulnerabilitiesOf(app)).critical.sla.state).toBe("on_track");
    await w.runOnce();
    expect(await breachesOf(app)).toHaveLength(1);
    await t.request("PUT", `/applications/${app}`, { body: { criticality: "critical" } });
    await w.runOnce();
    expect(await breachesOf(app)).toHaveLength(2);
  });

  it("is not told for an accepted vulnerability, nor for a resolved one", async () => {
    const app = await scannedApplication("medium", [CRITICAL]);
    await t.request("POST", `/applications/${app}/vex`, {
      rawBody: JSON.stringify(openVex([statement(CRITICAL.id, "not_affected", { products: [{ "@id": LOG4J }] })])),
      headers: { "content-type": "application/json" },
    });
    await t.request("PUT", "/sla", { body: { days: { critical: 1e-9 } } });
    await watcher().runOnce();
    expect(await breachesOf(app)).toEqual([]);
  });
});

describe("decisions that expire", () => {
  const accept = (app: string, query = "") =>
    t.request("POST", `/applications/${app}/vex${query}`, {
      rawBody: JSON.stringify(
        openVex([statement(CRITICAL.id, "not_affected", { products: [{ "@id": LOG4J }] })], new Date().toISOString()),
      ),
      headers: { "content-type": "application/json" },
    });
  const updatesOf = (app: string) =>
    t.app.db.prisma.event.findMany({
      where: { applicationId: app, type: "vulnerability.updated" },
      orderBy: [{ occurredAt: "asc" }, { id: "asc" }],
    });

  it.each([
    ["in the past", "2020-01-01T00:00:00Z"],
    ["unparsable", "next-week"],
    ["without a time zone", "2030-01-01T00:00:00"],
  ])("refuses an expiresAt %s: 400 with its path", async (_what, value) => {
    const app = await scannedApplication("medium", [CRITICAL]);
    const res = await accept(app, `?expiresAt=${encodeURIComponent(value)}`);
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain("expiresAt");
  });

  it("reopens the vulnerability when the decision ends, once, with its history, its event and its clock resumed", async () => {
    const app = await scannedApplication("medium", [CRITICAL]);
    const found = (await vulnerabilitiesOf(app)).critical;
    const expiresAt = new Date(Date.now() + 1_500).toISOString();
    expect((await accept(app, `?expiresAt=${expiresAt}`)).status).toBe(200);
    const accepted = (await vulnerabilitiesOf(app)).critical;
    expect(accepted.status).toBe("accepted");
    expect(accepted.analysis.expiresAt).toBe(expiresAt);
    expect(accepted.sla).toEqual({ dueAt: null, state: "paused" });
    const w = watcher();
    expect(await w.runOnce()).toBeGreaterThanOrEqual(0);
    expect((await vulnerabilitiesOf(app)).critical.status).toBe("accepted"); // not yet
    const reopenedAt = await eventually(async () => {
      await w.runOnce();
      return (await vulnerabilitiesOf(app)).critical.status === "open" && Date.now();
    }, 10_000);
    expect(reopenedAt).toBeGreaterThanOrEqual(Date.parse(expiresAt));
    const reopened = (await vulnerabilitiesOf(app)).critical;
    expect(reopened.analysis).toBeNull();
    // The clock did not run while it was accepted.
    expect(Date.parse(reopened.sla.dueAt)).toBeGreaterThan(Date.parse(found.sla.dueAt));
    const history = (await t.request("GET", `/applications/${app}/vulnerabilities/${found.id}/history`)).body;
    expect(history.at(-1)).toMatchObject({ from: "accepted", to: "open", source: "expiry", by: null });
    await w.runOnce();
    const updates = await updatesOf(app);
    expect(updates.map((e) => (e.data as { status: string }).status)).toEqual(["accepted", "open"]);
    expect(updates[1]!.data).toEqual({
      id: found.id,
      severity: "critical",
      applicationId: app,
      title: found.title,
      createdAt: found.createdAt,
      status: "open",
      analysis: null,
    });
  });

  it("is replaced by a later decision: a new end, or none", async () => {
    const app = await scannedApplication("medium", [CRITICAL]);
    expect((await accept(app, `?expiresAt=${new Date(Date.now() + 1_000).toISOString()}`)).status).toBe(200);
    const later = new Date(Date.now() + 3_600_000).toISOString();
    expect((await accept(app, `?expiresAt=${later}`)).body.applied).toBe(1);
    expect((await vulnerabilitiesOf(app)).critical.analysis.expiresAt).toBe(later);
    expect((await accept(app)).body.applied).toBe(1);
    expect((await vulnerabilitiesOf(app)).critical.analysis.expiresAt).toBeUndefined();
    await sleep(1_200);
    await watcher().runOnce();
    expect((await vulnerabilitiesOf(app)).critical.status).toBe("accepted");
  });

  it("is taken by GraphQL's applyVex too", async () => {
    const app = await scannedApplication("medium", [CRITICAL]);
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const res = await t.request("POST", "/graphql", {
      body: {
        query: `mutation ($app: ID!, $doc: JSON!, $at: String) { applyVex(applicationId: $app, document: $doc, expiresAt: $at) { applied } }`,
        variables: {
          app,
          at: expiresAt,
          doc: openVex([statement(CRITICAL.id, "not_affected", { products: [{ "@id": LOG4J }] })]),
        },
      },
    });
    expect(res.body).toEqual({ data: { applyVex: { applied: 1 } } });
    const id = (await vulnerabilitiesOf(app)).critical.id;
    const read = await t.request("POST", "/graphql", {
      body: { query: `{ application(id: "${app}") { vulnerability(id: "${id}") { analysis { expiresAt } } } }` },
    });
    expect(read.body.data.application.vulnerability.analysis.expiresAt).toBe(expiresAt);
  });
});

describe("the policy condition slaBreached", () => {
  it("matches only vulnerabilities past their deadline, with the severity threshold", async () => {
    const app = await scannedApplication();
    const { critical } = await vulnerabilitiesOf(app);
    const created = await t.request("POST", "/policies", {
      body: {
        name: `late-${app}`,
        action: "block",
        conditions: { applicationIds: [app], vulnerabilitySeverity: "high", slaBreached: true },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.conditions).toEqual({
      applicationIds: [app],
      vulnerabilitySeverity: "high",
      slaBreached: true,
    });
    const gate = async () => (await t.request("GET", `/applications/${app}/policy-evaluation`)).body;
    expect((await gate()).decision).toBe("pass");
    await t.request("PUT", "/sla", { body: { days: { critical: 1e-9 } } });
    const blocked = await gate();
    expect(blocked.decision).toBe("block");
    expect(blocked.violations).toEqual([expect.objectContaining({ vulnerabilityIds: [critical.id] })]);
    await t.request("DELETE", `/policies/${created.body.id}`);
  });

  it("is absent from a policy without it, and refused when not a boolean", async () => {
    const plain = await t.request("POST", "/policies", { body: { name: `plain-${++n}`, action: "monitor" } });
    expect(plain.body.conditions).toEqual({ applicationIds: null, vulnerabilitySeverity: null });
    const bad = await t.request("POST", "/policies", {
      body: { name: `bad-${++n}`, action: "monitor", conditions: { slaBreached: "yes" } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { path: string }) => e.path)).toEqual(["conditions.slaBreached"]);
    await t.request("DELETE", `/policies/${plain.body.id}`);
  });
});
