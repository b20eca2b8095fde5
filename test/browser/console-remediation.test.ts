// Triage and remediation deadlines in the console (docs/spec/CONTRACT.md §19), in a real Chromium
// against a real service, by accessible role and name: a vulnerability accepted from its row until a
// moment that passes (and open again, live), under investigation and reopened; its SLA state, due
// date and the SLA filter; the portfolio's breached counts; the remediation view's figures as the
// API gives them; and axe-core and 375 px on the views they changed.
import type { Browser, Locator, Page } from "playwright-core";
import { DISPATCHER_NAME } from "../../src/dispatcher/dispatcher.ts";
import { DEADLINE_WATCHER_NAME } from "../../src/domain/sla/deadline-watcher.ts";
import {
  axeViolations,
  closeCheckedPages,
  launchBrowser,
  openPage,
  overflowAt375,
  type ConsolePage,
} from "../helpers/browser.ts";
import { startAll } from "../helpers/start-all.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";
import { cyclonedxReport, type ScannedVulnerability } from "../helpers/vex-documents.ts";

let t: TestApp;
let browser: Browser;
const opened: ConsolePage[] = [];

beforeAll(async () => {
  // The dispatcher fans committed events out to the live subscriptions; the deadline watcher ends
  // expiring decisions, every 200 ms here.
  await startAll([
    startTestApp(
      { SCAN_DURATION_MS: "0", SLA_CHECK_INTERVAL_MS: "200" },
      { workers: [DISPATCHER_NAME, DEADLINE_WATCHER_NAME] },
    ).then((app) => (t = app)),
    launchBrowser().then((b) => (browser = b)),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});
afterEach(async () => {
  await closeCheckedPages(opened);
  expect((await t.request("PUT", "/sla", { body: {} })).status).toBe(200);
});

const LOG4SHELL: ScannedVulnerability = {
  id: "CVE-2021-44228",
  purl: "pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1",
  severity: "critical",
};
const LODASH: ScannedVulnerability = { id: "CVE-2021-23337", purl: "pkg:npm/lodash@4.17.20", severity: "high" };
// The same CVE in another package: a statement made for one must leave the other alone.
const LODASH_ES: ScannedVulnerability = { id: "CVE-2021-23337", purl: "pkg:npm/lodash-es@4.17.20", severity: "high" };

interface StoredVulnerability {
  id: string;
  title: string;
  cve: string | null;
  location: string | null;
  status: string;
  sla: { dueAt: string | null; state: string };
  analysis: { state: string; justification: string | null; detail: string | null; expiresAt: string | null } | null;
}

let n = 0;
async function reportedApplication(findings: ScannedVulnerability[], owner = "team-remediation") {
  const name = `remediation-app-${++n}-${Date.now()}`;
  const id = (await t.request("POST", "/applications", { body: { name, owner } })).body.id as string;
  const res = await t.request("POST", `/applications/${id}/scan-reports?triggeredBy=ci-bot`, {
    rawBody: JSON.stringify(cyclonedxReport(findings)),
    headers: { "content-type": "application/vnd.cyclonedx+json" },
  });
  expect(res.status).toBe(202);
  const stored = (await t.request("GET", `/applications/${id}/vulnerabilities?limit=100`))
    .body as StoredVulnerability[];
  const of = (f: ScannedVulnerability) => stored.find((v) => v.cve === f.id && v.location?.startsWith(f.purl))!;
  return { id, name, of };
}

const vulnerability = async (app: string, id: string) =>
  (await t.request("GET", `/applications/${app}/vulnerabilities/${id}`)).body as StoredVulnerability;

async function signedIn(to: string, width?: number): Promise<Page> {
  const p = await openPage(browser, t.baseUrl, { width });
  opened.push(p);
  await p.page.goto(`${t.baseUrl}/#token=${await t.token()}`);
  await p.page.getByRole("status").filter({ hasText: "Live" }).waitFor();
  await p.page.evaluate((path) => {
    history.pushState(null, "", path);
    dispatchEvent(new PopStateEvent("popstate"));
  }, to);
  return p.page;
}

const table = (page: Page) => page.getByRole("table", { name: /Vulnerabilities/ });
const row = (page: Page, v: StoredVulnerability): Locator =>
  table(page)
    .getByRole("row")
    .filter({ has: page.getByRole("rowheader", { name: v.title, exact: true }) })
    .filter({ hasText: v.location ?? "" });
/** The row's cells by column: Severity, Status, Due, … (the title is the row's header). */
const cell = (r: Locator, column: "Status" | "Due") => r.getByRole("cell").nth(column === "Status" ? 1 : 2);
const markDocument = (page: Page) =>
  page.evaluate(() => ((window as unknown as { sameDocument: boolean }).sameDocument = true));
const sameDocument = (page: Page) =>
  page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument === true);

describe("accepting a vulnerability from its row until a moment", () => {
  it("pauses its SLA, and it is open again, live, when the moment passes", async () => {
    const app = await reportedApplication([LOG4SHELL, LODASH, LODASH_ES]);
    const lodash = app.of(LODASH);
    const lodashEs = app.of(LODASH_ES);
    expect(lodash.sla.state).toBe("on_track");
    const page = await signedIn(`/console/applications/${app.id}`);
    const r = row(page, lodash);
    await cell(r, "Status").getByText("open", { exact: true }).waitFor();
    await cell(r, "Due").getByText("on track", { exact: true }).waitFor();
    expect(await cell(r, "Due").locator("time").getAttribute("datetime")).toBe(lodash.sla.dueAt);
    await markDocument(page);

    const triage = r.getByRole("button", { name: `Triage ${lodash.title}` });
    expect(await triage.getAttribute("aria-expanded")).toBe("false");
    await triage.click();
    expect(await triage.getAttribute("aria-expanded")).toBe("true");
    const form = page.getByRole("form", { name: `Triage of ${lodash.title}` });
    const accept = form.getByRole("radio", { name: "Accept (not affected)" });
    // The form's first control has the focus, and is chosen.
    expect(await accept.evaluate((el) => el === document.activeElement)).toBe(true);
    expect(await accept.isChecked()).toBe(true);
    await form.getByRole("combobox", { name: "Justification" }).selectOption("vulnerable_code_not_in_execute_path");
    await form.getByRole("textbox", { name: "Why it does not affect us" }).fill("template() never sees user input.");
    // Four seconds from now, in the browser's local time, as a person types it.
    const ends = await page.evaluate(() => {
      const d = new Date(Date.now() + 4_000);
      const pad = (x: number) => String(x).padStart(2, "0");
      return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
    });
    await form.getByLabel("Accepted until (optional)").fill(ends);
    await form.getByRole("button", { name: "Apply triage" }).click();
    await form.getByRole("status").getByText("Triage sent: 1 applied, 0 unchanged, 0 pending.").waitFor();

    await cell(r, "Status").getByText("accepted", { exact: true }).waitFor();
    await cell(r, "Due").getByText("paused", { exact: true }).waitFor();
    expect(await cell(r, "Due").locator("time").count()).toBe(0);
    const accepted = await vulnerability(app.id, lodash.id);
    expect(accepted).toMatchObject({
      status: "accepted",
      sla: { state: "paused", dueAt: null },
      analysis: {
        state: "not_affected",
        justification: "vulnerable_code_not_in_execute_path",
        detail: "template() never sees user input.",
      },
    });
    expect(Math.abs(Date.parse(accepted.analysis!.expiresAt!) - Date.parse(new Date(ends).toISOString()))).toBe(0);
    // One statement for exactly this vulnerability: the same CVE in lodash-es is left open.
    expect((await vulnerability(app.id, lodashEs.id)).status).toBe("open");
    expect((await vulnerability(app.id, app.of(LOG4SHELL).id)).status).toBe("open");

    // The moment passes: the deadline watcher reopens it, and the row shows it without a reload.
    await cell(r, "Status").getByText("open", { exact: true }).waitFor({ timeout: 15_000 });
    await cell(r, "Due").locator("time").waitFor();
    const reopened = await vulnerability(app.id, lodash.id);
    expect(reopened.status).toBe("open");
    expect(reopened.sla.dueAt).not.toBeNull();
    expect(await cell(r, "Due").locator("time").getAttribute("datetime")).toBe(reopened.sla.dueAt);
    expect(await cell(r, "Due").getByText("paused").count()).toBe(0);
    expect(await sameDocument(page)).toBe(true);
    const history = (await t.request("GET", `/applications/${app.id}/vulnerabilities/${lodash.id}/history`)).body;
    expect(history.map((h: { to: string; source: string }) => `${h.to}:${h.source}`)).toEqual([
      "open:report",
      "accepted:vex",
      "open:expiry",
    ]);
  });
});

describe("under investigation and reopen from the row", () => {
  it("send their statements, by keyboard alone, and the row shows each status", async () => {
    const app = await reportedApplication([LOG4SHELL, LODASH]);
    const log4shell = app.of(LOG4SHELL);
    const page = await signedIn(`/console/applications/${app.id}`);
    const r = row(page, log4shell);
    await cell(r, "Status").getByText("open", { exact: true }).waitFor();

    const triage = r.getByRole("button", { name: `Triage ${log4shell.title}` });
    await triage.focus();
    await page.keyboard.press("Enter");
    const form = page.getByRole("form", { name: `Triage of ${log4shell.title}` });
    await form.waitFor();
    // The radio group: arrow keys move the choice.
    await page.keyboard.press("ArrowRight");
    expect(await form.getByRole("radio", { name: "Under investigation" }).isChecked()).toBe(true);
    expect(await form.getByLabel("Accepted until (optional)").count()).toBe(0);
    await form.getByRole("textbox", { name: "Notes" }).fill("Checking whether JNDI lookups are reachable.");
    await form.getByRole("button", { name: "Apply triage" }).press("Enter");
    await form.getByRole("status").getByText("Triage sent: 1 applied, 0 unchanged, 0 pending.").waitFor();
    await cell(r, "Status").getByText("in progress", { exact: true }).waitFor();
    expect((await vulnerability(app.id, log4shell.id)).status).toBe("in_progress");

    await form.getByRole("radio", { name: "Reopen" }).check();
    await form.getByRole("button", { name: "Apply triage" }).click();
    await cell(r, "Status").getByText("open", { exact: true }).waitFor();
    await form.getByRole("status").getByText("Triage sent: 1 applied, 0 unchanged, 0 pending.").waitFor();
    const history = (await t.request("GET", `/applications/${app.id}/vulnerabilities/${log4shell.id}/history`)).body;
    expect(history.map((h: { to: string; source: string }) => `${h.to}:${h.source}`)).toEqual([
      "open:report",
      "in_progress:vex",
      "open:vex",
    ]);
    expect(history[1].detail).toBe("Checking whether JNDI lookups are reachable.");
    expect((await vulnerability(app.id, app.of(LODASH).id)).status).toBe("open");

    // Escape closes the form and gives the focus back to the row's Triage button.
    await form.getByRole("radio", { name: "Reopen" }).focus();
    await page.keyboard.press("Escape");
    await form.waitFor({ state: "detached" });
    expect(await triage.evaluate((el) => el === document.activeElement)).toBe(true);
    expect(await triage.getAttribute("aria-expanded")).toBe("false");
  });

  it("announces a refusal as an alert", async () => {
    const app = await reportedApplication([LODASH]);
    const lodash = app.of(LODASH);
    const page = await signedIn(`/console/applications/${app.id}`);
    const r = row(page, lodash);
    await r.getByRole("button", { name: `Triage ${lodash.title}` }).click();
    const form = page.getByRole("form", { name: `Triage of ${lodash.title}` });
    await form.getByRole("textbox", { name: "Why it does not affect us" }).fill("Never deployed.");
    // A moment already past: the service refuses it.
    await form.getByLabel("Accepted until (optional)").fill("2001-01-01T00:00:00");
    await form.getByRole("button", { name: "Apply triage" }).click();
    await page
      .getByRole("alert")
      .getByText(/expiresAt must be in the future/)
      .waitFor();
    expect((await vulnerability(app.id, lodash.id)).status).toBe("open");
  });
});

describe("the SLA in the vulnerability list", () => {
  it("filters by SLA state, kept in the address: breached shows only the breached rows", async () => {
    const app = await reportedApplication([LOG4SHELL, LODASH]);
    // Critical ones are due a fraction of a millisecond after they were found: breached at once.
    expect((await t.request("PUT", "/sla", { body: { days: { critical: 1e-9 } } })).status).toBe(200);
    const breached = (await t.request("GET", `/applications/${app.id}/vulnerabilities?sla=breached`))
      .body as StoredVulnerability[];
    expect(breached.map((v) => v.cve)).toEqual([LOG4SHELL.id]);
    const page = await signedIn(`/console/applications/${app.id}`);
    await row(page, app.of(LODASH)).waitFor();

    await page.getByRole("combobox", { name: "SLA" }).selectOption({ label: "breached" });
    await page.waitForURL(/[?&]sla=BREACHED\b/);
    await page.getByRole("status").getByText("Showing 1–1 of 1").waitFor();
    const rows = table(page).getByRole("row");
    expect(await rows.count()).toBe(2); // the header and the breached one
    const r = row(page, app.of(LOG4SHELL));
    await cell(r, "Due").getByText("breached", { exact: true }).waitFor();
    expect(await cell(r, "Due").locator("time").getAttribute("datetime")).toBe(breached[0]!.sla.dueAt);

    await page.getByRole("combobox", { name: "SLA" }).selectOption({ label: "on track" });
    await page.waitForURL(/[?&]sla=ON_TRACK\b/);
    await row(page, app.of(LODASH)).waitFor();
    await r.waitFor({ state: "detached" });

    // Loaded from the address, the filter is as it was left.
    await page.reload();
    await row(page, app.of(LODASH)).waitFor();
    expect(await page.getByRole("combobox", { name: "SLA" }).inputValue()).toBe("ON_TRACK");
    expect(await table(page).getByRole("row").count()).toBe(2);
  });
});

describe("the portfolio", () => {
  it("gives each application's breached count, under its column header", async () => {
    const app = await reportedApplication([LOG4SHELL, LODASH], `team-breach-${Date.now()}`);
    const other = await reportedApplication([LODASH], `team-breach-other-${Date.now()}`);
    expect((await t.request("PUT", "/sla", { body: { days: { critical: 1e-9, high: 1e-9 } } })).status).toBe(200);
    const page = await signedIn("/");
    const applications = page.getByRole("table", { name: "Applications" });
    const headers = (await applications.getByRole("columnheader").allInnerTexts()).map((s) => s.trim());
    const column = headers.indexOf("Breached");
    expect(column).toBeGreaterThan(0);
    const count = async (name: string) => {
      const r = applications.getByRole("row").filter({ has: page.getByRole("link", { name, exact: true }) });
      // The application's name is the row's header, so cells are one to the left of the headers.
      return (
        await r
          .getByRole("cell")
          .nth(column - 1)
          .innerText()
      ).trim();
    };
    await applications.getByRole("link", { name: app.name }).waitFor();
    expect(await count(app.name)).toBe("2");
    expect(await count(other.name)).toBe("1");

    // Back to the defaults: nothing is breached any more.
    expect((await t.request("PUT", "/sla", { body: {} })).status).toBe(200);
    await page.reload();
    await applications.getByRole("link", { name: app.name }).waitFor();
    expect(await count(app.name)).toBe("0");
  });
});

interface SeverityMetrics {
  resolved: number;
  mttrDays: { median: number | null; p90: number | null };
  withinSla: number | null;
  openByAge: { fromDays: number; toDays: number | null; count: number }[];
  breached: number;
}
const SEVERITIES = ["critical", "high", "medium", "low"] as const;

/** The API's figures as the tables should read them: days to one decimal, shares in per cent. */
function expectedTables(bySeverity: Record<(typeof SEVERITIES)[number], SeverityMetrics>) {
  const days = (d: number | null) => (d === null ? "—" : d.toFixed(1));
  const bins = bySeverity.critical.openByAge;
  return {
    bySeverity: SEVERITIES.map((s) => {
      const m = bySeverity[s];
      const within = m.withinSla === null ? "—" : `${Math.round(m.withinSla * 100)}%`;
      return [
        s[0]!.toUpperCase() + s.slice(1),
        String(m.resolved),
        days(m.mttrDays.median),
        days(m.mttrDays.p90),
        within,
        String(m.breached),
      ];
    }),
    byAge: bins.map((b, i) => [
      b.toDays === null ? `${b.fromDays} days or more` : `${b.fromDays}–${b.toDays} days`,
      ...SEVERITIES.map((s) => String(bySeverity[s].openByAge[i]!.count)),
    ]),
  };
}

/** A table's body rows as text, the row header first. */
const tableRows = (page: Page, name: RegExp) =>
  page
    .getByRole("table", { name })
    .locator("tbody tr")
    .evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => (c as HTMLElement).innerText.trim())));

describe("the remediation view", () => {
  it("draws the figures of a team and of an application, with the numbers GET /remediation-metrics gives", async () => {
    const owner = `team-metrics-${Date.now()}`;
    const app = await reportedApplication([LOG4SHELL, LODASH, LODASH_ES], owner);
    const other = await reportedApplication([LODASH], owner);
    // Found three and a half days ago (no service sets the time of a change), lodash fixed now;
    // Log4Shell's clock started 40 days ago.
    await t.app.db.prisma.$executeRaw`
      UPDATE vulnerability_changes c SET at = now() - interval '3 days 12 hours' FROM vulnerabilities v
       WHERE v.id = c.vulnerability_id AND v.application_id = ${app.id}::uuid`;
    await t.app.db.prisma.$executeRaw`
      UPDATE vulnerabilities SET sla_clock_base = now() - interval '40 days' WHERE id = ${app.of(LOG4SHELL).id}::uuid`;
    const fixed = {
      "@context": "https://openvex.dev/ns/v0.2.0",
      "@id": `https://vex.example.com/remediation/${Date.now()}`,
      author: "remediation tests",
      timestamp: new Date().toISOString(),
      version: 1,
      statements: [{ vulnerability: { name: LODASH.id }, products: [{ "@id": LODASH.purl }], status: "fixed" }],
    };
    expect((await t.request("POST", `/applications/${app.id}/vex`, { body: fixed })).body).toMatchObject({
      applied: 1,
    });
    const teamMetrics = (await t.request("GET", `/remediation-metrics?owner=${owner}`)).body;
    expect(teamMetrics.bySeverity.high.resolved).toBe(1);
    expect(teamMetrics.bySeverity.high.mttrDays.median).toBeGreaterThan(3.4);
    expect(teamMetrics.bySeverity.critical.openByAge[2].count).toBe(1);

    const page = await signedIn("/");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Remediation" }).click();
    await page.getByRole("heading", { level: 1, name: "Remediation" }).waitFor();
    const team = page.getByRole("combobox", { name: "Team" });
    await team.getByRole("option", { name: owner, exact: true }).waitFor({ state: "attached" });
    await team.selectOption(owner);
    await page.waitForURL(new RegExp(`[?&]owner=${owner}`));
    const byTeam = expectedTables(teamMetrics.bySeverity);
    const bySeverity = new RegExp(`^Remediation by severity, applications owned by ${owner}$`);
    const byAge = new RegExp(`^Open vulnerabilities by age and severity, applications owned by ${owner}$`);
    await page.getByRole("table", { name: bySeverity }).waitFor();
    expect(await tableRows(page, bySeverity)).toEqual(byTeam.bySeverity);
    expect(await tableRows(page, byAge)).toEqual(byTeam.byAge);
    expect(byTeam.bySeverity[1]![2]).not.toBe("—");
    // Both charts are drawn, each an image named for what it shows.
    for (const name of [/^Chart: Days to remediate by severity/, /^Chart: Open vulnerabilities by age/])
      expect(
        await page
          .getByRole("img", { name })
          .locator("canvas")
          .evaluate((c: HTMLCanvasElement) => c.width),
      ).toBeGreaterThan(100);

    // One application of that team, chosen among them.
    const application = page.getByRole("combobox", { name: "Application" });
    expect(await application.locator("option").allInnerTexts()).toEqual([
      "all applications",
      ...[app.name, other.name].sort(),
    ]);
    await application.selectOption({ label: other.name });
    await page.waitForURL(new RegExp(`[?&]application=${other.id}`));
    const appMetrics = (await t.request("GET", `/remediation-metrics?applicationId=${other.id}`)).body;
    const ofApp = expectedTables(appMetrics.bySeverity);
    const appTable = new RegExp(`^Remediation by severity, ${other.name}$`);
    await page.getByRole("table", { name: appTable }).waitFor();
    expect(await tableRows(page, appTable)).toEqual(ofApp.bySeverity);
    expect(await tableRows(page, new RegExp(`^Open vulnerabilities by age and severity, ${other.name}$`))).toEqual(
      ofApp.byAge,
    );
    expect(ofApp).not.toEqual(byTeam);
  });
});

describe("accessibility of the changed views", () => {
  it("the application view with a triage form open, the portfolio and the remediation view: no serious violation, no sideways scroll at 375 px", async () => {
    const app = await reportedApplication([LOG4SHELL, LODASH]);
    expect((await t.request("PUT", "/sla", { body: { days: { critical: 1e-9 } } })).status).toBe(200);
    const page = await signedIn(`/console/applications/${app.id}`);
    const lodash = app.of(LODASH);
    await row(page, app.of(LOG4SHELL)).getByText("breached", { exact: true }).waitFor();
    await row(page, lodash)
      .getByRole("button", { name: `Triage ${lodash.title}` })
      .click();
    await page.getByRole("form", { name: `Triage of ${lodash.title}` }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    const sizes = await overflowAt375(page);
    expect(sizes.scrollWidth).toBeLessThanOrEqual(sizes.innerWidth);

    const narrow = await signedIn("/", 375);
    await narrow.getByRole("table", { name: "Applications" }).getByRole("link", { name: app.name }).waitFor();
    expect(await axeViolations(narrow)).toEqual([]);
    const portfolio = await overflowAt375(narrow);
    expect(portfolio.scrollWidth).toBeLessThanOrEqual(portfolio.innerWidth);

    await narrow.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Remediation" }).click();
    await narrow.getByRole("table", { name: /^Open vulnerabilities by age and severity/ }).waitFor();
    await narrow
      .getByRole("img", { name: /^Chart: Open vulnerabilities by age/ })
      .locator("canvas")
      .waitFor();
    expect(await axeViolations(narrow)).toEqual([]);
    const remediation = await overflowAt375(narrow);
    expect(remediation.scrollWidth).toBeLessThanOrEqual(remediation.innerWidth);
  });
});
