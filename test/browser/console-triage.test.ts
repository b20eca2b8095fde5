// The application view's triage in a real Chromium against a real service, by accessible role and
// name: a vulnerability's analysis and history after a triage made through the API, another
// client's triage showing live, the trend of open vulnerabilities with its numbers as text, and a
// VEX document uploaded with the file picker.
import type { Browser, Locator, Page } from "playwright-core";
import { DISPATCHER_NAME } from "../../src/dispatcher/dispatcher.ts";
import { launchBrowser, openPage, closeCheckedPages, type ConsolePage } from "../helpers/browser.ts";
import { startAll } from "../helpers/start-all.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";
import { cyclonedxReport, type ScannedVulnerability } from "../helpers/vex-documents.ts";

let t: TestApp;
let browser: Browser;
const opened: ConsolePage[] = [];

beforeAll(async () => {
  // The dispatcher runs: it fans committed events out to the live subscriptions.
  await startAll([
    startTestApp({ SCAN_DURATION_MS: "0" }, { workers: [DISPATCHER_NAME] }).then((app) => (t = app)),
    launchBrowser().then((b) => (browser = b)),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});
afterEach(() => closeCheckedPages(opened));

const LOG4SHELL: ScannedVulnerability = {
  id: "CVE-2021-44228",
  purl: "pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1",
  severity: "critical",
};
const LODASH: ScannedVulnerability = { id: "CVE-2021-23337", purl: "pkg:npm/lodash@4.17.20", severity: "high" };
const QS: ScannedVulnerability = { id: "CVE-2022-24999", purl: "pkg:npm/qs@6.5.2", severity: "medium" };

let n = 0;
async function reportedApplication(findings: ScannedVulnerability[]): Promise<string> {
  const app = (
    await t.request("POST", "/applications", {
      body: { name: `triage-app-${++n}-${Date.now()}`, owner: "team-triage" },
    })
  ).body.id as string;
  const res = await t.request("POST", `/applications/${app}/scan-reports?triggeredBy=ci-bot`, {
    rawBody: JSON.stringify(cyclonedxReport(findings)),
    headers: { "content-type": "application/vnd.cyclonedx+json" },
  });
  expect(res.status).toBe(202);
  return app;
}

/** An OpenVEX 0.2.0 document (https://github.com/openvex/spec, v0.2.0), written for these tests. */
function openVexDocument(statements: Record<string, unknown>[]) {
  return {
    "@context": "https://openvex.dev/ns/v0.2.0",
    "@id": `https://vex.example.com/console-tests/${Date.now()}-${++n}`,
    author: "Console test security team",
    timestamp: new Date().toISOString(),
    version: 1,
    statements,
  };
}

const notAffected = (cve: string, purl: string) => ({
  vulnerability: { name: cve },
  products: [{ "@id": purl }],
  status: "not_affected",
  justification: "vulnerable_code_not_in_execute_path",
  impact_statement: "The JNDI lookup is disabled by configuration in every deployment.",
});

async function applyVex(app: string, statements: Record<string, unknown>[], sub = "alice") {
  const res = await t.request("POST", `/applications/${app}/vex`, {
    body: openVexDocument(statements),
    token: await t.token(["vulnerabilities:triage"], sub),
  });
  expect(res.status).toBe(200);
  return res.body;
}

async function signedIn(app: string): Promise<Page> {
  const p = await openPage(browser, t.baseUrl);
  opened.push(p);
  await p.page.goto(`${t.baseUrl}/#token=${await t.token()}`);
  await p.page.getByRole("status").filter({ hasText: "Live" }).waitFor();
  await p.page.evaluate((to) => {
    history.pushState(null, "", to);
    dispatchEvent(new PopStateEvent("popstate"));
  }, `/console/applications/${app}`);
  return p.page;
}

const vulnerabilityRow = (page: Page, cve: string): Locator =>
  page
    .getByRole("table", { name: /Vulnerabilities/ })
    .getByRole("row", { name: new RegExp(cve) })
    .first();

/** A description list as [term, definition] pairs, in order. */
const definitions = (list: Locator) =>
  list.evaluate((dl) =>
    [...dl.querySelectorAll("dt")].map((dt) => [dt.textContent!.trim(), dt.nextElementSibling!.textContent!.trim()]),
  );

describe("a vulnerability's analysis and history", () => {
  it("are shown on demand after a triage made through the API, and hidden again", async () => {
    const app = await reportedApplication([LOG4SHELL, LODASH]);
    await applyVex(app, [notAffected(LOG4SHELL.id, LOG4SHELL.purl)]);
    const [stored] = (await t.request("GET", `/applications/${app}/vulnerabilities?status=accepted`)).body;
    const page = await signedIn(app);

    const row = vulnerabilityRow(page, LOG4SHELL.id);
    await row.getByText("accepted").waitFor();
    const details = row.getByRole("button", { name: `Details of ${stored.title}` });
    expect(await details.getAttribute("aria-expanded")).toBe("false");
    await details.click();
    expect(await details.getAttribute("aria-expanded")).toBe("true");

    const history = page.getByRole("table", {
      name: new RegExp(`^History of ${stored.title.replace(/[.@]/g, "\\$&")}`),
    });
    await history.waitFor();
    const rows = history.getByRole("row");
    expect(await rows.count()).toBe(3);
    expect((await rows.nth(1).getByRole("cell").allInnerTexts()).map((s) => s.trim())).toEqual([
      "created",
      "open",
      "report",
      "ci-bot",
      "—",
      "—",
    ]);
    expect((await rows.nth(2).getByRole("cell").allInnerTexts()).map((s) => s.trim())).toEqual([
      "open",
      "accepted",
      "vex",
      "alice",
      "vulnerable code not in execute path",
      "The JNDI lookup is disabled by configuration in every deployment.",
    ]);
    const panel = page.locator(`#details-${stored.id}`);
    const analysis = await definitions(panel.locator("dl").first());
    expect(analysis.slice(0, 4)).toEqual([
      ["State", "not affected"],
      ["Justification", "vulnerable code not in execute path"],
      ["Response", "—"],
      ["Detail", "The JNDI lookup is disabled by configuration in every deployment."],
    ]);
    expect(analysis[4]![1]).toMatch(/^alice \(vex\), .+/);

    await details.click();
    await history.waitFor({ state: "detached" });
  });
});

describe("another client's triage", () => {
  it("shows in an open application view without a reload: the status and an open history", async () => {
    const app = await reportedApplication([LOG4SHELL, LODASH]);
    const page = await signedIn(app);
    const row = vulnerabilityRow(page, LODASH.id);
    await row.getByText("open").waitFor();
    const [stored] = (await t.request("GET", `/applications/${app}/vulnerabilities?status=open&severity=high`)).body;
    await row.getByRole("button", { name: `Details of ${stored.title}` }).click();
    const history = page.getByRole("table", {
      name: new RegExp(`^History of ${stored.title.replace(/[.@]/g, "\\$&")}`),
    });
    await history.waitFor();
    expect(await history.getByRole("row").count()).toBe(2);
    await page.evaluate(() => ((window as unknown as { sameDocument: boolean }).sameDocument = true));

    await applyVex(app, [notAffected(LODASH.id, LODASH.purl)], "bob");

    await row.getByText("accepted").waitFor();
    await history.getByRole("row").nth(2).waitFor();
    expect(
      (await history.getByRole("row").nth(2).getByRole("cell").allInnerTexts()).map((s) => s.trim()).slice(0, 4),
    ).toEqual(["open", "accepted", "vex", "bob"]);
    // Refetched queries, not a reload: the page went on with the same document.
    expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);
  });
});

describe("the trend of open vulnerabilities", () => {
  it("draws the chart and gives its numbers, as the API made them, in a table", async () => {
    const app = await reportedApplication([LOG4SHELL, LODASH, QS]);
    // Found three and a half days ago (no service sets the time of a change), one accepted now.
    await t.app.db.prisma.$executeRaw`
      UPDATE vulnerability_changes c SET at = now() - interval '3 days 12 hours' FROM vulnerabilities v
       WHERE v.id = c.vulnerability_id AND v.application_id = ${app}::uuid`;
    await applyVex(app, [notAffected(LODASH.id, LODASH.purl)]);
    const page = await signedIn(app);

    const figure = page.getByRole("figure", {
      name: "Open and in-progress vulnerabilities by severity, last 30 days, daily",
    });
    const chart = figure.getByRole("img", { name: /^Chart: Open and in-progress vulnerabilities by severity/ });
    await chart.locator("canvas").waitFor();
    expect(await chart.locator("canvas").evaluate((c: HTMLCanvasElement) => c.width)).toBeGreaterThan(100);
    expect(await figure.getByRole("list", { name: "Legend" }).getByRole("listitem").allInnerTexts()).toEqual([
      "Critical: 1 now",
      "High: 0 now",
      "Medium: 1 now",
      "Low: 0 now",
    ]);

    await figure.getByText("The chart's numbers").click();
    const table = figure.getByRole("table", { name: /the count at each point/ });
    const rows = table.getByRole("row");
    expect(await rows.count()).toBe(31); // 30 days, a point a day, and the header
    const counts = async (i: number) => (await rows.nth(i).getByRole("cell").allInnerTexts()).map(Number);
    expect(await counts(1)).toEqual([1, 0, 1, 0]); // now: the lodash CVE accepted
    for (const i of [2, 3, 4]) expect(await counts(i)).toEqual([1, 1, 1, 0]); // 1, 2 and 3 days ago
    for (const i of [5, 30]) expect(await counts(i)).toEqual([0, 0, 0, 0]); // before they were found
  });
});

describe("a VEX document uploaded with the file picker", () => {
  it("applies its statements, says what they did and shows the new statuses; a refused document shows the API's problem", async () => {
    const app = await reportedApplication([LOG4SHELL, LODASH]);
    const page = await signedIn(app);
    await vulnerabilityRow(page, LOG4SHELL.id).getByText("open").waitFor();

    const document = openVexDocument([
      notAffected(LOG4SHELL.id, LOG4SHELL.purl),
      { vulnerability: { name: "CVE-2099-0001" }, status: "under_investigation" },
    ]);
    await page.getByLabel("VEX document", { exact: true }).setInputFiles({
      name: "decisions.openvex.json",
      mimeType: "application/json",
      buffer: Buffer.from(JSON.stringify(document)),
    });
    await page.getByRole("button", { name: "Apply VEX" }).click();
    await page
      .getByRole("status")
      .getByText(
        "VEX document applied: 1 applied (a vulnerability's status or analysis changed), 0 unchanged, 1 pending (kept for findings not seen yet).",
      )
      .waitFor();
    const row = vulnerabilityRow(page, LOG4SHELL.id);
    await row.getByText("accepted").waitFor();
    await row.getByText("not affected").waitFor();
    expect(await vulnerabilityRow(page, LODASH.id).getByText("open").count()).toBe(1);
    const stored = (await t.request("GET", `/applications/${app}/vulnerabilities?status=accepted`)).body;
    expect(stored.map((v: { cve: string }) => v.cve)).toEqual([LOG4SHELL.id]);

    const broken = {
      ...document,
      "@context": "https://openvex.dev/ns/v0.2.0",
      statements: [{ vulnerability: { name: LOG4SHELL.id }, status: "not_affected" }],
    };
    await page.getByLabel("VEX document", { exact: true }).setInputFiles({
      name: "broken.json",
      mimeType: "application/json",
      buffer: Buffer.from(JSON.stringify(broken)),
    });
    await page.getByRole("button", { name: "Apply VEX" }).click();
    const alert = page.getByRole("alert");
    await alert.getByText("Validation failed (400)").waitFor();
    expect(await alert.innerText()).toContain("/statements/0");
  });
});
