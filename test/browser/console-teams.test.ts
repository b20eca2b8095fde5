// The console with team access on (docs/spec/CONTRACT.md §17), in a real Chromium against a real
// service: the layout says whose view it is, and an org-wide viewer narrows the portfolio to one
// team, a choice kept in the address.
import type { Browser, Page } from "playwright-core";
import { mintToken } from "../../src/auth/mint-token.ts";
import {
  axeViolations,
  closeCheckedPages,
  launchBrowser,
  openPage,
  overflowAt375,
  screenshotPath,
  type ConsolePage,
} from "../helpers/browser.ts";
import { startAll } from "../helpers/start-all.ts";
import { startTestApp, TEST_JWT_SECRET, type TestApp } from "../helpers/test-app.ts";

const READ_SCOPES = ["applications:read", "scans:read", "vulnerabilities:read", "policies:read", "webhooks:read"];
/** A team name long enough to test the narrow screen with, in the header and in the filter. */
const LONG_TEAM = "team-platform-reliability-and-observability-engineering";

let t: TestApp;
let browser: Browser;
const opened: ConsolePage[] = [];
const apps = { teamA: [] as string[], teamB: [] as string[], long: [] as string[], unowned: [] as string[] };

beforeAll(async () => {
  await startAll([
    startTestApp({ AUTH_TEAMS_CLAIM: "teams", AUTH_ORG_WIDE_TEAMS: "appsec" }).then((app) => (t = app)),
    launchBrowser().then((b) => (browser = b)),
  ]);
  // Made with the admin token (org-wide: it may give any owner, or none).
  const make = async (list: string[], name: string, owner: string | null) => {
    const res = await t.request("POST", "/applications", { body: { name, owner, criticality: "medium" } });
    expect(res.status).toBe(201);
    list.push(name);
  };
  await make(apps.teamA, "teams-ledger", "team-a");
  await make(apps.teamA, "teams-payroll", "team-a");
  await make(apps.teamB, "teams-storefront", "team-b");
  await make(apps.long, "teams-metrics", LONG_TEAM);
  await make(apps.unowned, "teams-orphan", null);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});
afterEach(() => closeCheckedPages(opened));

const tokenOf = (sub: string, teams: string[]) =>
  mintToken({ secret: TEST_JWT_SECRET, sub, scopes: READ_SCOPES, teams });

/** A page signed in with `token` pasted into the sign-in form, on the portfolio. */
async function signedInWith(token: string, pathname = "/"): Promise<ConsolePage> {
  const p = await openPage(browser, t.baseUrl);
  opened.push(p);
  await p.page.goto(t.baseUrl + pathname);
  await p.page.getByLabel("Access token").fill(token);
  await p.page.getByRole("button", { name: "Sign in" }).click();
  await p.page.getByRole("heading", { name: "Portfolio", level: 1 }).waitFor();
  return p;
}

/** The names of the applications the portfolio lists, once it says how many there are. */
async function listed(page: Page, summary: string): Promise<string[]> {
  await page.getByText(summary).waitFor();
  const names = await page.getByRole("table", { name: "Applications" }).getByRole("rowheader").allInnerTexts();
  return names.sort();
}

const teamFilter = (page: Page) => page.getByLabel("Team", { exact: true });

/** The filter's choices once the owners are read. */
async function teamChoices(page: Page): Promise<string[]> {
  await page.locator('#filter-owner[aria-busy="false"]').waitFor();
  return teamFilter(page).locator("option").allInnerTexts();
}

async function expectAccessible(page: Page, view: string) {
  expect(await axeViolations(page)).toEqual([]);
  const { scrollWidth, innerWidth } = await overflowAt375(page, screenshotPath("teams", view));
  expect(innerWidth).toBe(375);
  expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
}

describe("the console with team access on", () => {
  it("says an org-wide token's view is org-wide; its team filter lists the owners, narrows the portfolio to team-a's and keeps the choice across a reload", async () => {
    const { page } = await signedInWith(await tokenOf("appsec-lead", ["appsec"]));
    const banner = page.getByRole("banner");
    await banner.getByText("Signed in as appsec-lead").waitFor();
    await banner.getByText("Org-wide view: all teams").waitFor();

    const everyApp = [...apps.teamA, ...apps.teamB, ...apps.long, ...apps.unowned].sort();
    expect(await listed(page, "5 applications, newest first.")).toEqual(everyApp);
    // The distinct owners present, once each, sorted; an application without an owner names no team.
    expect(await teamChoices(page)).toEqual(["all teams", "team-a", "team-b", LONG_TEAM].sort());
    await expectAccessible(page, "org-wide portfolio");

    await teamFilter(page).selectOption("team-a");
    expect(await listed(page, "2 applications owned by team-a, newest first.")).toEqual(apps.teamA.sort());
    expect(new URL(page.url()).searchParams.get("owner")).toBe("team-a");
    await expectAccessible(page, "org-wide portfolio filtered by team");

    await page.reload();
    expect(await listed(page, "2 applications owned by team-a, newest first.")).toEqual(apps.teamA.sort());
    expect(await teamFilter(page).inputValue()).toBe("team-a");

    await teamFilter(page).selectOption({ label: "all teams" });
    expect(await listed(page, "5 applications, newest first.")).toEqual(everyApp);
    expect(new URL(page.url()).search).toBe("");
  });

  it("opens an address naming a team with that team's applications only", async () => {
    const { page } = await signedInWith(await tokenOf("appsec-lead", ["appsec"]), `/?owner=${LONG_TEAM}`);
    expect(await listed(page, `1 application owned by ${LONG_TEAM}, newest first.`)).toEqual(apps.long);
    expect(await teamFilter(page).inputValue()).toBe(LONG_TEAM);
  });

  it("names the one team of a token of team-b, and offers no team filter (there is nothing to choose)", async () => {
    const { page } = await signedInWith(await tokenOf("bob", ["team-b"]));
    const banner = page.getByRole("banner");
    await banner.getByText("Signed in as bob").waitFor();
    await banner.getByText("Team: team-b", { exact: true }).waitFor();
    expect(await banner.getByText(/Org-wide/).count()).toBe(0);
    await page.getByRole("table", { name: "Applications" }).waitFor();
    expect(await teamFilter(page).count()).toBe(0);
    await expectAccessible(page, "team-b portfolio");
  });

  it("lists only team-b's applications to a token of team-b, and none to a token of no team", async () => {
    const bob = (await signedInWith(await tokenOf("bob", ["team-b"]))).page;
    const table = bob.getByRole("table", { name: "Applications" });
    await table.getByRole("row", { name: new RegExp(apps.teamB[0]!) }).waitFor();
    expect(await table.getByRole("rowheader").allInnerTexts()).toEqual(apps.teamB);
    await bob.getByText("1 application, newest first.").waitFor();

    const dave = (await signedInWith(await tokenOf("dave", []))).page;
    await dave.getByText("This token belongs to no team, so it sees no application.").waitFor();
  });

  it("offers the team filter to a token of two teams, and names both", async () => {
    const { page } = await signedInWith(await tokenOf("carol", ["team-b", LONG_TEAM]));
    await page.getByRole("banner").getByText(`Teams: team-b, ${LONG_TEAM}`).waitFor();
    await teamChoices(page);
    await teamFilter(page).selectOption("team-b");
    expect(await listed(page, "1 application owned by team-b, newest first.")).toEqual(apps.teamB);
    await expectAccessible(page, "two-team portfolio");
  });

  it("tells a token of no team that it sees no application", async () => {
    const { page } = await signedInWith(await tokenOf("dave", []));
    const banner = page.getByRole("banner");
    await banner.getByText("Signed in as dave").waitFor();
    await banner.getByText("No team: this token sees no application").waitFor();
    expect(await teamFilter(page).count()).toBe(0);
  });
});
