// Remediation metrics (docs/spec/CONTRACT.md §19) equal the figures the test computes from the API's
// own history: each resolution in the period, its days from the cycle's start (first found, or the
// reopening) and whether it beat its deadline (time accepted not counting), and the open ones now.
import { startTestApp, type TestApp } from "../helpers/test-app.ts";
import { cyclonedxReport, openVex, statement, type ScannedVulnerability } from "../helpers/vex-documents.ts";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SCAN_DURATION_MS: "0" });
});
afterAll(() => t.close());

const DAY_MS = 86_400_000;
const LOG4J = "pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1?type=jar";
const CRITICAL: ScannedVulnerability = { id: "CVE-2021-44228", purl: LOG4J, severity: "critical" };
const HIGH: ScannedVulnerability = { id: "CVE-2021-23337", purl: "pkg:npm/lodash@4.17.20", severity: "high" };
const MEDIUM: ScannedVulnerability = { id: "CVE-2022-0001", purl: "pkg:npm/left-pad@1.0.0", severity: "medium" };

const upload = async (app: string, findings: ScannedVulnerability[]) => {
  const res = await t.request("POST", `/applications/${app}/scan-reports`, {
    rawBody: JSON.stringify(cyclonedxReport(findings)),
    headers: { "content-type": "application/vnd.cyclonedx+json" },
  });
  expect(res.status).toBe(202);
};
const vex = async (app: string, status: string) => {
  const res = await t.request("POST", `/applications/${app}/vex`, {
    rawBody: JSON.stringify(
      openVex([statement(CRITICAL.id, status, { products: [{ "@id": LOG4J }] })], new Date().toISOString()),
    ),
    headers: { "content-type": "application/json" },
  });
  expect(res.status).toBe(200);
};

/** The model: per resolution in [from, to), its days and whether it beat its deadline. */
function resolutionsOf(
  history: { at: string; from: string | null; to: string }[],
  days: number,
  from: number,
  to: number,
) {
  const out: { days: number; within: boolean }[] = [];
  let start = Date.parse(history[0]!.at);
  let paused = 0;
  let acceptedAt: number | null = null;
  for (const change of history) {
    const at = Date.parse(change.at);
    if (change.from === "resolved") {
      start = at;
      paused = 0;
    }
    if (acceptedAt !== null) {
      paused += at - acceptedAt;
      acceptedAt = null;
    }
    if (change.to === "accepted") acceptedAt = at;
    if (change.to === "resolved" && at >= from && at < to)
      out.push({ days: (at - start) / DAY_MS, within: at < start + paused + Math.floor(days * DAY_MS) });
  }
  return out;
}

const percentile = (sorted: number[], q: number) => {
  if (sorted.length === 0) return null;
  const at = (sorted.length - 1) * q;
  const below = Math.floor(at);
  const above = Math.min(below + 1, sorted.length - 1);
  return sorted[below]! + (sorted[above]! - sorted[below]!) * (at - below);
};

it("equals the figures computed from each vulnerability's history, for an application and its team", async () => {
  const from = new Date(Date.now() - 1000).toISOString();
  const owner = "metrics-team";
  const app = (await t.request("POST", "/applications", { body: { name: "metrics", owner, criticality: "high" } })).body
    .id as string;
  // Critical: found, accepted, back in triage, resolved. High: found, resolved, found again, resolved.
  // Medium: found, still open.
  await upload(app, [CRITICAL, HIGH, MEDIUM]);
  await vex(app, "not_affected");
  await vex(app, "under_investigation");
  await upload(app, [MEDIUM]);
  await upload(app, [HIGH, MEDIUM]);
  await upload(app, [MEDIUM]);
  // The critical's deadline is far shorter than its life here; the high's is 30 days.
  expect((await t.request("PUT", "/sla", { body: { days: { critical: 1e-9 } } })).status).toBe(200);
  const vulnerabilities = (await t.request("GET", `/applications/${app}/vulnerabilities`)).body as any[];
  expect(vulnerabilities.map((v) => `${v.severity} ${v.status}`).sort()).toEqual([
    "critical resolved",
    "high resolved",
    "medium open",
  ]);
  const res = await t.request("GET", `/remediation-metrics?applicationId=${app}&from=${from}`);
  expect(res.status).toBe(200);
  const to = Date.parse(res.body.to);
  const sla = (await t.request("GET", "/sla")).body;
  for (const v of vulnerabilities) {
    const history = (await t.request("GET", `/applications/${app}/vulnerabilities/${v.id}/history`)).body;
    const days = sla.byCriticality.high?.[v.severity] ?? sla.days[v.severity];
    const resolutions = resolutionsOf(history, days, Date.parse(from), to);
    const sorted = resolutions.map((r) => r.days).sort((a, b) => a - b);
    const metrics = res.body.bySeverity[v.severity];
    expect(metrics.resolved).toBe(resolutions.length);
    for (const [key, q] of [
      ["median", 0.5],
      ["p90", 0.9],
    ] as const) {
      const expected = percentile(sorted, q);
      if (expected === null) expect(metrics.mttrDays[key]).toBeNull();
      else expect(metrics.mttrDays[key]).toBeCloseTo(expected, 10);
    }
    expect(metrics.withinSla).toBe(
      resolutions.length ? resolutions.filter((r) => r.within).length / resolutions.length : null,
    );
  }
  expect(res.body.bySeverity.high.resolved).toBe(2);
  expect(res.body.bySeverity.high.withinSla).toBe(1);
  expect(res.body.bySeverity.critical.withinSla).toBe(0);
  expect(res.body.bySeverity.medium.resolved).toBe(0);
  expect(res.body.bySeverity.medium.mttrDays).toEqual({ median: null, p90: null });
  expect(res.body.bySeverity.medium.openByAge).toEqual([
    { fromDays: 0, toDays: 7, count: 1 },
    { fromDays: 8, toDays: 30, count: 0 },
    { fromDays: 31, toDays: 90, count: 0 },
    { fromDays: 91, toDays: 180, count: 0 },
    { fromDays: 181, toDays: null, count: 0 },
  ]);
  expect(res.body.bySeverity.medium.breached).toBe(0);
  // The team's figures are the application's (its only one); GraphQL says the same.
  const team = await t.request("GET", `/remediation-metrics?owner=${owner}&from=${from}&to=${res.body.to}`);
  expect(team.body.bySeverity).toEqual(res.body.bySeverity);
  const gql = await t.request("POST", "/graphql", {
    body: {
      query: `query ($app: ID!, $from: DateTime, $to: DateTime) { remediationMetrics(applicationId: $app, from: $from, to: $to) {
        bySeverity { high { resolved withinSla mttrDays { median p90 } openByAge { fromDays toDays count } breached } } } }`,
      variables: { app, from, to: res.body.to },
    },
  });
  expect(gql.body.data.remediationMetrics.bySeverity.high).toEqual(res.body.bySeverity.high);
  await t.request("PUT", "/sla", { body: {} });
});

it.each([
  ["from=yesterday", "from"],
  ["from=2026-12-01T00:00:00Z&to=2026-11-01T00:00:00Z", "from"],
])("answers 400 with the path to %s", async (query, path) => {
  const res = await t.request("GET", `/remediation-metrics?${query}`);
  expect(res.status).toBe(400);
  expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
});

it("answers 404 for an unknown application", async () => {
  expect((await t.request("GET", "/remediation-metrics?applicationId=not-an-id")).status).toBe(404);
  expect((await t.request("GET", `/remediation-metrics?applicationId=${crypto.randomUUID()}`)).status).toBe(404);
});
