// The application view's recent changes (docs/spec/CONTRACT.md §17's audit trail), in a real
// Chromium against a real service with team access on: who changed what, newest first, with the
// owner a change moved the application from when the viewer's events say it, and a change made
// while the view is open shown as it is made.
import type { Browser, Page } from "playwright-core";
import { mintToken } from "../../src/auth/mint-token.ts";
import { DISPATCHER_NAME } from "../../src/dispatcher/dispatcher.ts";
import {
  axeViolations,
  closeCheckedPages,
  launchBrowser,
  openPage,
  overflowAt375,
  screenshotPath,
  type ConsolePage,
} from "../helpers/browser.ts";
import { eventually } from "../helpers/scan-engines.ts";
import { startAll } from "../helpers/start-all.ts";
import { startTestApp, TEST_JWT_SECRET, type TestApp } from "../helpers/test-app.ts";

const SCOPES = ["applications:read", "applications:write", "scans:read", "vulnerabilities:read", "policies:read"];

let t: TestApp;
let browser: Browser;
const opened: ConsolePage[] = [];

beforeAll(async () => {
  await startAll([
    // The dispatcher's fan-out numbers the events into the log the view reads.
    startTestApp({ AUTH_TEAMS_CLAIM: "teams", AUTH_ORG_WIDE_TEAMS: "appsec" }, { workers: [DISPATCHER_NAME] }).then(
      (app) => (t = app),
    ),
    launchBrowser().then((b) => (browser = b)),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});
afterEach(() => closeCheckedPages(opened));

const tokenOf = (sub: string, teams: string[], scopes = SCOPES) =>
  mintToken({ secret: TEST_JWT_SECRET, sub, scopes, teams });

let n = 0;
async function created(token: string, owner: string): Promise<string> {
  const res = await t.request("POST", "/applications", {
    token,
    body: { name: `audit-app-${++n}-${Date.now()}`, owner, criticality: "medium", tags: ["web"] },
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function updated(token: string, id: string, body: Record<string, unknown>) {
  const res = await t.request("PUT", `/applications/${id}`, { token, body });
  expect(res.status).toBe(200);
}

/** Waits until the log holds `count` changes of the application (the fan-out numbers them shortly after the commit). */
async function logged(id: string, count: number) {
  const path = `/events?applicationId=${id}&types=application.created,application.updated&limit=500`;
  await eventually(async () => (await t.request("GET", path)).body.length === count);
}

/** A page signed in with `token` (the development link's fragment), on the application's view. */
async function viewOf(id: string, token: string): Promise<Page> {
  const p = await openPage(browser, t.baseUrl);
  opened.push(p);
  await p.page.goto(`${t.baseUrl}/console/applications/${id}#token=${token}`);
  await p.page.getByRole("heading", { name: "Recent changes", level: 2 }).waitFor();
  return p.page;
}

interface Row {
  at: string;
  who: string;
  what: string;
}

/** The rows of the changes table named `caption`, once it shows `count` of them. */
async function changeRows(page: Page, caption: string, count: number): Promise<Row[]> {
  const rows = page.getByRole("table", { name: caption }).locator("tbody tr");
  await eventually(async () => (await rows.count()) === count);
  return rows.evaluateAll((trs) =>
    trs.map((tr) => {
      const [who, what] = [...tr.querySelectorAll("td")].map((td) => td.textContent ?? "");
      return { at: tr.querySelector("th time")?.getAttribute("datetime") ?? "", who: who!, what: what! };
    }),
  );
}

const newestFirst = (rows: Row[]) => rows.every((row, i) => i === 0 || row.at <= rows[i - 1]!.at);

describe("the application view's recent changes", () => {
  it("lists who changed what, newest first, adds a change made while it is open, and is accessible", async () => {
    const alice = await tokenOf("alice", ["team-ledger"]);
    const bob = await tokenOf("bob", ["team-ledger"]);
    const carol = await tokenOf("carol", ["appsec"]);
    const id = await created(alice, "team-ledger");
    await updated(bob, id, { description: "Pays the bills", tags: ["web", "pci"] });
    await updated(carol, id, { owner: "team-payments" });
    await logged(id, 3);

    const page = await viewOf(id, await t.token());
    const rows = await changeRows(page, "Changes, newest first", 3);
    expect(rows.map(({ who, what }) => ({ who, what }))).toEqual([
      { who: "carol", what: "changed owner from team-ledger to team-payments" },
      { who: "bob", what: "changed description, tags" },
      { who: "alice", what: "created" },
    ]);
    expect(newestFirst(rows)).toBe(true);
    expect(rows.every((row) => !Number.isNaN(Date.parse(row.at)))).toBe(true);

    expect(await axeViolations(page)).toEqual([]);
    const { scrollWidth, innerWidth } = await overflowAt375(page, screenshotPath("audit", "application changes"));
    expect(innerWidth).toBe(375);
    expect(scrollWidth).toBeLessThanOrEqual(innerWidth);

    // Another client's change shows on top as it is made, and the details follow it.
    const criticality = page.locator("dt", { hasText: /^Criticality$/ }).locator("+ dd");
    expect(await criticality.innerText()).toBe("medium");
    await updated(await tokenOf("dave", ["team-payments"]), id, { criticality: "critical" });
    const live = await changeRows(page, "Changes, newest first", 4);
    expect(live[0]).toMatchObject({ who: "dave", what: "changed criticality" });
    expect(newestFirst(live)).toBe(true);
    await criticality.getByText("critical", { exact: true }).waitFor();
  });

  it("shows the latest 20 of more, the owner of the oldest shown derived from the one before it", async () => {
    const alice = await tokenOf("alice", ["team-a", "team-b"]);
    const id = await created(alice, "team-a");
    // 24 updates: the 5th moves it to team-b, which makes it the oldest of the 20 latest changes.
    for (let i = 1; i <= 24; i++)
      await updated(alice, id, i === 5 ? { owner: "team-b" } : { description: `take ${i}` });
    await logged(id, 25);

    const page = await viewOf(id, alice);
    const rows = await changeRows(page, "The latest 20 of 25 changes, newest first", 20);
    expect(rows[0]!.what).toBe("changed description");
    expect(rows.at(-1)!.what).toBe("changed owner from team-a to team-b");
    expect(newestFirst(rows)).toBe(true);
  });

  it("names the owner a change moved the application from only when the viewer saw the change before it", async () => {
    const sec = await tokenOf("sec", ["appsec"]);
    const ann = await tokenOf("ann", ["team-a"]);
    const id = await created(ann, "team-a");
    await updated(sec, id, { owner: "team-b" });
    await updated(sec, id, { owner: "team-c" }); // team-a sees neither this nor what team-b and team-c do
    await updated(sec, id, { owner: "team-a" });
    await logged(id, 4);

    // team-a's list skips the move from team-b to team-c: the change before the last it sees left
    // the application with team-b, not the team the last one moved it from.
    const confined = await viewOf(id, ann);
    expect((await changeRows(confined, "Changes, newest first", 3)).map((r) => r.what)).toEqual([
      "changed owner to team-a",
      "changed owner from team-a to team-b",
      "created",
    ]);
    const orgWide = await viewOf(id, sec);
    expect((await changeRows(orgWide, "Changes, newest first", 4)).map((r) => r.what)).toEqual([
      "changed owner from team-c to team-a",
      "changed owner from team-b to team-c",
      "changed owner from team-a to team-b",
      "created",
    ]);
  });
});
