import { jest } from "@jest/globals";
import type { PolicyAction, Severity } from "../../src/generated/prisma/client.ts";
import { newId } from "../../src/ids.ts";
import { createEngines } from "../../src/scans/engines/create-engines.ts";
import type { Finding } from "../../src/scans/engines/engine.ts";
import { createScanRunner } from "../../src/scans/scan-runner.ts";
import { codesOf, gql } from "../helpers/graphql.ts";
import { finding, scriptedEngine } from "../helpers/scan-engines.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
const scripts = new Map<string, Finding[]>();
beforeAll(async () => {
  t = await startTestApp({ SCAN_DURATION_MS: "0" });
});
afterAll(() => t.close());

const prisma = () => t.app.db.prisma;
let n = 0;

/** An application whose one completed sast scan reported `findings`. */
async function scannedApplication(findings: Finding[]): Promise<{ appId: string; scanId: string }> {
  const appId = (await t.request("POST", "/applications", { body: { name: `gate-app-${++n}` } })).body.id as string;
  scripts.set(appId, findings);
  const scanId = (await t.request("POST", `/applications/${appId}/scans`, { body: { scanType: "sast" } })).body
    .id as string;
  const runner = createScanRunner({
    db: prisma(),
    engines: createEngines({
      durationMs: 0,
      overrides: { sast: scriptedEngine("sast", (target) => scripts.get(target.applicationId) ?? []) },
    }),
    log: t.app.log,
    leaseMs: 30_000,
  });
  while ((await runner.runOnce()) > 0);
  return { appId, scanId };
}

async function policy(action: PolicyAction, options: { severity?: Severity; applicationIds?: string[] } = {}) {
  const now = new Date();
  return prisma().policy.create({
    data: {
      id: newId(),
      name: `policy-${++n}`,
      action,
      allApplications: options.applicationIds === undefined,
      applicationIds: options.applicationIds ?? [],
      vulnerabilitySeverity: options.severity ?? null,
      createdAt: now,
      updatedAt: now,
    },
  });
}

const gate = (appId: string, token?: string) => t.request("GET", `/applications/${appId}/policy-evaluation`, { token });
const idsOf = async (appId: string, severities: Severity[]) =>
  (
    await prisma().vulnerability.findMany({
      where: { applicationId: appId, severity: { in: severities } },
      orderBy: { id: "asc" },
    })
  ).map((v) => v.id);

// Policies here are targeted (applicationIds) so tests do not see each other's; one test uses a global one last.
describe("GET /applications/{id}/policy-evaluation", () => {
  it("passes when no policy matches", async () => {
    const { appId } = await scannedApplication([finding("l1", "low")]);
    await policy("block", { severity: "high", applicationIds: [appId] });
    const res = await gate(appId);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ applicationId: appId, decision: "pass", violations: [] });
  });

  it("warns when a monitor policy matches", async () => {
    const { appId } = await scannedApplication([finding("m1", "medium"), finding("l1", "low")]);
    const p = await policy("monitor", { severity: "medium", applicationIds: [appId] });
    const res = await gate(appId);
    expect(res.body).toEqual({
      applicationId: appId,
      decision: "warn",
      violations: [
        { policyId: p.id, policyName: p.name, action: "monitor", vulnerabilityIds: await idsOf(appId, ["medium"]) },
      ],
    });
  });

  it("blocks on open or in_progress vulnerabilities at or above the threshold, ignoring resolved and accepted ones", async () => {
    const { appId } = await scannedApplication([
      finding("c1", "critical"),
      finding("c2", "critical"),
      finding("h1", "high"),
      finding("h2", "high"),
      finding("m1", "medium"),
    ]);
    const [c1, c2, h1, h2] = await Promise.all(
      ["fp-c1", "fp-c2", "fp-h1", "fp-h2"].map((fp) =>
        prisma().vulnerability.findFirstOrThrow({ where: { applicationId: appId, fingerprint: fp } }),
      ),
    );
    await prisma().vulnerability.update({ where: { id: c2!.id }, data: { status: "accepted" } });
    await prisma().vulnerability.update({ where: { id: h2!.id }, data: { status: "resolved" } });
    await prisma().vulnerability.update({ where: { id: h1!.id }, data: { status: "in_progress" } });
    const p = await policy("block", { severity: "high", applicationIds: [appId] });
    const res = await gate(appId);
    expect(res.body.decision).toBe("block");
    expect(res.body.violations).toEqual([
      { policyId: p.id, policyName: p.name, action: "block", vulnerabilityIds: [c1!.id, h1!.id].sort() },
    ]);
  });

  it("turns block into warn when an allow policy matches too, but not when the allow policy does not match", async () => {
    const { appId } = await scannedApplication([finding("h1", "high")]);
    const block = await policy("block", { applicationIds: [appId] });
    await policy("allow", { severity: "critical", applicationIds: [appId] }); // no critical: does not match
    expect((await gate(appId)).body.decision).toBe("block");
    await policy("allow", { severity: "high", applicationIds: [appId] });
    const res = await gate(appId);
    expect(res.body.decision).toBe("warn");
    expect(res.body.violations).toEqual([
      { policyId: block.id, policyName: block.name, action: "block", vulnerabilityIds: await idsOf(appId, ["high"]) },
    ]);
  });

  it("applies a policy only to its applications: an empty list targets none", async () => {
    const { appId } = await scannedApplication([finding("c1", "critical")]);
    const { appId: other } = await scannedApplication([finding("c1", "critical")]);
    await policy("block", { applicationIds: [other] });
    await policy("block", { applicationIds: [] });
    expect((await gate(appId)).body.decision).toBe("pass");
    expect((await gate(other)).body.decision).toBe("block");
  });

  it("answers 404 for unknown and malformed ids and needs policies:read", async () => {
    expect((await gate("01900000-0000-7000-8000-000000000000")).status).toBe(404);
    expect((await gate("nope")).status).toBe(404);
    const { appId } = await scannedApplication([finding("x", "low")]);
    const denied = await gate(appId, await t.token(["vulnerabilities:read", "scans:read"]));
    expect(denied.status).toBe(403);
    expect(denied.headers.get("www-authenticate")).toContain('scope="policies:read"');
    expect((await gate(appId, await t.token(["policies:read"]))).status).toBe(200);
  });
});

describe("policy.violated on scan completion", () => {
  it("emits one event per matching block or monitor policy, none for allow, with the scan's id", async () => {
    const appId = (await t.request("POST", "/applications", { body: { name: `gate-app-${++n}` } })).body.id as string;
    const block = await policy("block", { severity: "critical", applicationIds: [appId] });
    const monitor = await policy("monitor", { applicationIds: [appId] });
    await policy("allow", { applicationIds: [appId] });
    await policy("monitor", { severity: "critical", applicationIds: [newId()] }); // someone else's
    scripts.set(appId, [finding("c1", "critical"), finding("l1", "low")]);
    const scanId = (await t.request("POST", `/applications/${appId}/scans`, { body: { scanType: "sast" } })).body
      .id as string;
    const runner = createScanRunner({
      db: prisma(),
      engines: createEngines({
        durationMs: 0,
        overrides: { sast: scriptedEngine("sast", (target) => scripts.get(target.applicationId) ?? []) },
      }),
      log: t.app.log,
      leaseMs: 30_000,
    });
    while ((await runner.runOnce()) > 0);

    const events = await prisma().event.findMany({ where: { applicationId: appId, type: "policy.violated" } });
    const byPolicy = new Map(events.map((e) => [(e.data as { policyId: string }).policyId, e.data]));
    expect(byPolicy.size).toBe(2);
    expect(byPolicy.get(block.id)).toEqual({
      policyId: block.id,
      policyName: block.name,
      action: "block",
      applicationId: appId,
      scanId,
      vulnerabilityIds: await idsOf(appId, ["critical"]),
    });
    expect(byPolicy.get(monitor.id)).toMatchObject({
      action: "monitor",
      scanId,
      vulnerabilityIds: await idsOf(appId, ["low", "critical"]),
    });
    expect((await gate(appId)).body.decision).toBe("warn"); // the allow policy exempts it from block
  });

  it("a global policy (allApplications) reaches every application", async () => {
    const { appId } = await scannedApplication([finding("g", "medium")]);
    expect((await gate(appId)).body.decision).toBe("pass");
    const global = await policy("monitor", { severity: "medium" });
    try {
      expect((await gate(appId)).body).toMatchObject({ decision: "warn", violations: [{ policyId: global.id }] });
    } finally {
      await prisma().policy.delete({ where: { id: global.id } });
    }
  });
});

describe("Application.policyEvaluation (GraphQL)", () => {
  const EVALUATIONS = `{ applications(first: 500) { edges { node { id
    policyEvaluation { applicationId decision violations { policyId policyName action vulnerabilityIds } } } } } }`;
  const graphqlGate = (token?: string) => gql(t, EVALUATIONS, {}, { token });
  const upper = (e: { applicationId: string; decision: string; violations: { action: string }[] }) => ({
    ...e,
    decision: e.decision.toUpperCase(),
    violations: e.violations.map((v) => ({ ...v, action: v.action.toUpperCase() })),
  });

  it("answers what the REST gate answers, for every application of a list, in a bounded number of statements", async () => {
    const blocked = await scannedApplication([finding("c1", "critical"), finding("h1", "high")]);
    const warned = await scannedApplication([finding("m1", "medium")]);
    const exempt = await scannedApplication([finding("c1", "critical")]);
    const clean = await scannedApplication([finding("l1", "low")]);
    await policy("block", { severity: "high", applicationIds: [blocked.appId, exempt.appId, clean.appId] });
    await policy("monitor", { severity: "medium", applicationIds: [warned.appId] });
    await policy("allow", { applicationIds: [exempt.appId] });

    const statements: string[] = [];
    const original = t.app.db.pool.query.bind(t.app.db.pool);
    const spy = jest.spyOn(t.app.db.pool, "query").mockImplementation(((q: unknown, ...rest: unknown[]) => {
      statements.push(typeof q === "string" ? q : (q as { text: string }).text);
      return (original as (...a: unknown[]) => unknown)(q, ...rest);
    }) as never);
    const res = await graphqlGate().finally(() => spy.mockRestore());
    expect(res.body.errors).toBeUndefined();
    const byId = new Map(
      res.body.data.applications.edges.map((e: { node: { id: string; policyEvaluation: unknown } }) => [
        e.node.id,
        e.node.policyEvaluation,
      ]),
    );
    for (const { appId } of [blocked, warned, exempt, clean]) {
      expect(byId.get(appId)).toEqual(upper((await gate(appId)).body));
    }
    expect(byId.get(blocked.appId)).toMatchObject({ decision: "BLOCK" });
    expect(byId.get(warned.appId)).toMatchObject({ decision: "WARN" });
    expect(byId.get(exempt.appId)).toMatchObject({ decision: "WARN" });
    expect(byId.get(clean.appId)).toMatchObject({ decision: "PASS", violations: [] });
    // Policies and live vulnerabilities are read once for the whole list, not once per application.
    expect(statements.filter((s) => /FROM "public"\."policies"/i.test(s))).toHaveLength(1);
  });

  it("needs policies:read, as the REST gate does", async () => {
    await scannedApplication([finding("l1", "low")]);
    const token = await t.token(["applications:read"]);
    const res = await graphqlGate(token);
    expect(codesOf(res)).toContain("FORBIDDEN");
    expect(res.body.data).toBeNull();
    const withScope = await graphqlGate(await t.token(["applications:read", "policies:read"]));
    expect(withScope.body.errors).toBeUndefined();
  });
});
