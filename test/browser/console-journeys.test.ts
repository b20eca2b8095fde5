// The console's journeys in a real Chromium against a real service, by accessible role and name:
// sign-in, the portfolio, live scans, filters and paging, a report upload, a refused token, a
// dropped connection resumed by cursor (or refetched when it cannot be).
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { mintToken } from "../../src/auth/mint-token.ts";
import {
  axeViolations,
  launchBrowser,
  openPage,
  overflowAt375,
  closeCheckedPages,
  type ConsolePage,
} from "../helpers/browser.ts";
import { startAll } from "../helpers/start-all.ts";
import { eventually } from "../helpers/scan-engines.ts";
import { ROOT } from "../helpers/service-process.ts";
import { startTcpProxy } from "../helpers/tcp-proxy.ts";
import { cyclonedxReport } from "../helpers/vex-documents.ts";
import { startTestApp, TEST_JWT_SECRET, type TestApp } from "../helpers/test-app.ts";
import { DISPATCHER_NAME } from "../../src/dispatcher/dispatcher.ts";
import { EVENT_RETENTION_NAME, type EventRetention } from "../../src/events/event-retention.ts";

let t: TestApp;
let browser: Browser;
const opened: ConsolePage[] = [];

beforeAll(async () => {
  await startAll([
    startTestApp({ SCAN_DURATION_MS: "1200" }, { workers: [DISPATCHER_NAME] }).then((app) => (t = app)),
    launchBrowser().then((b) => (browser = b)),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});
afterEach(() => closeCheckedPages(opened));

let n = 0;
async function createApplication(body: Record<string, unknown> = {}): Promise<{ id: string; name: string }> {
  const res = await t.request("POST", "/applications", {
    body: { name: `journey-app-${++n}-${Date.now()}`, owner: "team-journeys", criticality: "high", ...body },
  });
  expect(res.status).toBe(201);
  return res.body;
}

/** Triggers scans of these types through REST and runs them to the end; their ids. */
async function scanned(appId: string, types: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const scanType of types) {
    const res = await t.request("POST", `/applications/${appId}/scans`, { body: { scanType } });
    expect(res.status).toBe(202);
    ids.push(res.body.id);
  }
  while ((await t.app.scanRunner.runOnce()) > 0);
  return ids;
}

interface Frame {
  at: number;
  message: any;
}

/** The graphql-ws messages a page sends and receives, on every WebSocket it opens. */
function watchFrames(page: Page): { sent: Frame[]; received: Frame[] } {
  const sent: Frame[] = [];
  const received: Frame[] = [];
  page.on("websocket", (ws) => {
    ws.on("framesent", (f) => sent.push({ at: Date.now(), message: JSON.parse(String(f.payload)) }));
    ws.on("framereceived", (f) => received.push({ at: Date.now(), message: JSON.parse(String(f.payload)) }));
  });
  return { sent, received };
}

/** Whether a sent `subscribe` frame asks for `field` (the page's subscriptions, and the head queries before them). */
const asking = (field: string) => (f: Frame) => String(f.message.payload?.query ?? "").includes(field);

/** A page signed in through the development link (the token in the fragment), at `path`. */
async function signedIn(pathname = "/", origin = t.baseUrl, prepare?: (page: Page) => void): Promise<Page> {
  const p = await openPage(browser, origin);
  opened.push(p);
  prepare?.(p.page);
  await p.page.goto(`${origin}/#token=${await t.token()}`);
  await p.page.getByRole("status").filter({ hasText: "Live" }).waitFor();
  if (pathname !== "/") {
    await p.page.evaluate((to) => {
      history.pushState(null, "", to);
      dispatchEvent(new PopStateEvent("popstate"));
    }, pathname);
  }
  return p.page;
}

describe("the console", () => {
  it("signs in with a pasted token, keeps it for the tab only, and lists the applications made through the API", async () => {
    const apps = [
      await createApplication({ owner: "team-a" }),
      await createApplication({ owner: "team-b", criticality: "low" }),
    ];
    const p = await openPage(browser, t.baseUrl);
    opened.push(p);
    const { page } = p;
    await page.goto(t.baseUrl + "/");
    await page.getByRole("heading", { name: "Sign in to the AppSec console" }).waitFor();

    await page.getByLabel("Access token").fill("not-a-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    const refused = page.getByRole("alert");
    await refused.getByText("Unauthorized (401)").waitFor();

    const token = await t.token();
    await page.getByLabel("Access token").fill(token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Portfolio", level: 1 }).waitFor();
    // Team access is off here: the subject is all there is to say of whose view it is.
    const banner = page.getByRole("banner");
    await banner.getByText("Signed in as tester").waitFor();
    expect(await banner.getByText(/team|org-wide/i).count()).toBe(0);
    expect(await page.getByLabel("Team", { exact: true }).count()).toBe(0);
    expect(await page.evaluate(() => sessionStorage.getItem("appsec.console.token"))).toBe(token);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);

    const table = page.getByRole("table", { name: "Applications" });
    for (const app of apps) {
      const row = table.getByRole("row", { name: new RegExp(app.name) });
      await row.waitFor();
      expect(await row.getByRole("cell").allInnerTexts()).toEqual(
        [
          app === apps[0] ? "team-a" : "team-b",
          app === apps[0] ? "high" : "low",
          "pass",
          "0 critical\n0 high\n0 medium\n0 low",
          "0", // breached
          "never scanned",
        ].map((s) => expect.stringContaining(s.split("\n")[0]!)),
      );
    }

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in to the AppSec console" }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem("appsec.console.token"))).toBeNull();
  });

  it("takes the development link's token from the fragment and removes it from the address", async () => {
    const p = await openPage(browser, t.baseUrl);
    opened.push(p);
    const served: string[] = [];
    p.page.on("request", (r) => served.push(r.url()));
    await p.page.goto(`${t.baseUrl}/#token=${await t.token()}`);
    await p.page.getByRole("heading", { name: "Portfolio", level: 1 }).waitFor();
    expect(p.page.url()).toBe(`${t.baseUrl}/`);
    expect(served.some((url) => url.includes("token="))).toBe(false);
  });

  it("shows a scan triggered through REST by another client as running, then completed, within 1 s of each commit, without reload", async () => {
    const app = await createApplication();
    const page = await signedIn(`/console/applications/${app.id}`);
    await page.getByText("No scans yet").waitFor();
    // Each status a scan row shows, and when it was painted (wall clock, as the database's).
    await page.evaluate(() => {
      const w = window as unknown as { seen: { id: string; status: string; at: number }[]; notReloaded: boolean };
      w.notReloaded = true;
      w.seen = [];
      const last = new Map<string, string>();
      new MutationObserver(() => {
        for (const row of document.querySelectorAll<HTMLElement>("[data-scan-id]")) {
          const status = row.querySelector("td")?.textContent ?? "";
          if (last.get(row.dataset.scanId!) !== status) {
            last.set(row.dataset.scanId!, status);
            w.seen.push({ id: row.dataset.scanId!, status, at: Date.now() });
          }
        }
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });

    const scan = (await t.request("POST", `/applications/${app.id}/scans`, { body: { scanType: "sast" } })).body;
    await t.app.scanRunner.runOnce();
    const row = page.getByRole("table", { name: /Scans/ }).getByRole("row", { name: /sast/ });
    await row.getByText("completed").waitFor({ timeout: 1000 });
    const stored = await t.app.db.prisma.scan.findUniqueOrThrow({ where: { id: scan.id } });
    const seen = await page.evaluate(
      () => (window as unknown as { seen: { id: string; status: string; at: number }[] }).seen,
    );
    const running = seen.find((s) => s.id === scan.id && s.status === "running");
    const completed = seen.find((s) => s.id === scan.id && s.status === "completed");
    expect(running).toBeDefined();
    expect(completed).toBeDefined();
    expect(running!.at - stored.startedAt!.getTime()).toBeLessThan(1000);
    expect(completed!.at - stored.completedAt!.getTime()).toBeLessThan(1000);
    expect(running!.at).toBeLessThan(completed!.at);
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    // Its findings and the counts came with it.
    await page.getByText(/^Showing 1–/).waitFor();
  });

  it("filters the vulnerabilities by severity and status (kept in the address) and pages through them", async () => {
    const app = await createApplication();
    // A report of 45 findings (the simulator's counts depend on the random ids: sometimes 20 or fewer).
    const levels = ["critical", "high", "medium", "low"] as const;
    const findings = Array.from({ length: 45 }, (_, i) => ({
      id: `CVE-2026-${10000 + i}`,
      purl: `pkg:npm/journey-package-${i}@1.0.${i}`,
      severity: levels[i % 4],
    }));
    const uploaded = await t.request("POST", `/applications/${app.id}/scan-reports`, {
      rawBody: JSON.stringify(cyclonedxReport(findings)),
      headers: { "content-type": "application/vnd.cyclonedx+json" },
    });
    expect(uploaded.status).toBe(202);
    const all = (await t.request("GET", `/applications/${app.id}/vulnerabilities?limit=500`)).body as {
      severity: string;
    }[];
    expect(all).toHaveLength(45);
    const page = await signedIn(`/console/applications/${app.id}`);
    const table = page.getByRole("table", { name: /Vulnerabilities/ });

    await page.getByText(`Showing 1–20 of ${all.length}`).waitFor();
    expect(await table.getByRole("row").count()).toBe(21);
    await page.getByRole("button", { name: "Next page" }).click();
    await page.getByText(`Showing 21–${Math.min(40, all.length)} of ${all.length}`).waitFor();
    await page.getByRole("button", { name: "Previous page" }).click();
    await page.getByText(`Showing 1–20 of ${all.length}`).waitFor();

    const critical = all.filter((v) => v.severity === "critical").length;
    expect(critical).toBeGreaterThan(0);
    await page.getByLabel("Severity", { exact: true }).selectOption("CRITICAL");
    await page.getByText(`Showing 1–${Math.min(20, critical)} of ${critical}`).waitFor();
    expect(new URL(page.url()).searchParams.get("severity")).toBe("CRITICAL");
    const severities = await table.getByRole("row").locator("td:nth-child(2)").allInnerTexts();
    expect(new Set(severities)).toEqual(new Set(["critical"]));

    await page.getByLabel("Status").selectOption("RESOLVED");
    await page.getByText("No vulnerabilities match these filters.").waitFor();
    await page.reload();
    await page.getByText("No vulnerabilities match these filters.").waitFor();
    expect(await page.getByLabel("Status").inputValue()).toBe("RESOLVED");
  });

  it("uploads a SARIF report chosen with the file picker and shows its findings; a refused report shows the API's reasons", async () => {
    const app = await createApplication();
    const page = await signedIn(`/console/applications/${app.id}`);
    await page.getByText("No scans yet").waitFor();

    await page
      .getByLabel("Scanner report", { exact: true })
      .setInputFiles(path.join(ROOT, "test/fixtures/console/console-fixture.sarif"));
    await page.getByRole("button", { name: "Upload report" }).click();
    await page.getByText("Report accepted: a sast scan by ConsoleFixtureScanner was recorded.").waitFor();
    const vulnerabilities = page.getByRole("table", { name: /Vulnerabilities/ });
    for (const title of [
      "SQL query built from request parameters",
      "Request parameter written into HTML unescaped",
      "MD5 used to hash passwords",
    ]) {
      await vulnerabilities.getByRole("row", { name: new RegExp(title) }).waitFor();
    }
    const sql = vulnerabilities.getByRole("row", { name: /SQL query built/ });
    expect(await sql.innerText()).toMatch(
      /critical[\s\S]*open[\s\S]*9\.1[\s\S]*CWE-89[\s\S]*ConsoleFixtureScanner[\s\S]*src\/orders\/repository\.js:42/,
    );
    await page
      .getByRole("table", { name: /Scans/ })
      .getByRole("row", { name: /sast/ })
      .getByText("ConsoleFixtureScanner 1.0.0")
      .waitFor();

    await page.getByLabel("Scanner report", { exact: true }).setInputFiles({
      name: "broken.sarif",
      mimeType: "application/json",
      buffer: Buffer.from('{"version":"2.1.0","runs":[{"tool":{"driver":{}}}]}'),
    });
    await page.getByRole("button", { name: "Upload report" }).click();
    const alert = page.getByRole("alert");
    await alert.getByText("Validation failed (400)").waitFor();
    expect(await alert.innerText()).toContain("/runs/0/tool/driver");
  });

  it("shows a refused trigger as the API states it (a conflicting scan)", async () => {
    const app = await createApplication();
    expect((await t.request("POST", `/applications/${app.id}/scans`, { body: { scanType: "dast" } })).status).toBe(202);
    const page = await signedIn(`/console/applications/${app.id}`);
    await page.getByLabel("Scan type").selectOption("DAST");
    await page.getByRole("button", { name: "Trigger scan" }).click();
    const alert = page.getByRole("alert");
    await alert.getByText("Conflict").waitFor();
    expect(await alert.innerText()).toContain("A dast scan is already queued or running for this application");
    while ((await t.app.scanRunner.runOnce()) > 0);
  });

  it("returns to sign-in, saying why, when the service refuses the session's token (expired)", async () => {
    const page = await signedIn("/");
    const expired = await mintToken({
      secret: TEST_JWT_SECRET,
      sub: "tester",
      scopes: ["admin"],
      expiresIn: Math.floor(Date.now() / 1000) - 120,
    });
    await page.evaluate((token) => sessionStorage.setItem("appsec.console.token", token), expired);
    await page.reload();
    await page.getByRole("heading", { name: "Sign in to the AppSec console" }).waitFor();
    await page
      .getByRole("alert")
      .getByText(/Your session ended: .+/)
      .waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem("appsec.console.token"))).toBeNull();
  });

  it("resumes its subscription after the connection drops: what happened meanwhile is replayed, not refetched, without reload", async () => {
    const proxy = await startTcpProxy(Number(new URL(t.baseUrl).port));
    try {
      const app = await createApplication();
      let frames!: ReturnType<typeof watchFrames>;
      const page = await signedIn(`/console/applications/${app.id}`, proxy.url, (p) => (frames = watchFrames(p)));
      const graphqlPosts: number[] = [];
      page.on(
        "request",
        (r) => r.method() === "POST" && new URL(r.url()).pathname === "/graphql" && graphqlPosts.push(Date.now()),
      );
      await page.getByText("No scans yet").waitFor();
      await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));

      // A scan while connected: the page's subscription now has a cursor (its last payload's).
      await scanned(app.id, ["sast"]);
      const scans = page.getByRole("table", { name: /Scans/ });
      await scans.getByRole("row", { name: /sast/ }).getByText("completed").waitFor();
      const lastSeen = frames.received
        .filter((f) => f.message.type === "next" && f.message.payload.data?.scanUpdated)
        .at(-1)!.message.payload.data.scanUpdated;
      expect(lastSeen).toMatchObject({ status: "COMPLETED", cursor: expect.any(String) });

      proxy.cut();
      await page.getByRole("status").filter({ hasText: "Reconnecting…" }).waitFor();
      const sca = await scanned(app.id, ["sca"]); // while the page cannot hear
      const restoredAt = Date.now();
      proxy.restore();

      await page.getByRole("status").filter({ hasText: "Live" }).waitFor({ timeout: 15_000 });
      await scans.getByRole("row", { name: /sca/ }).getByText("completed").waitFor();
      await page.getByText(/^Showing 1–/).waitFor();
      await page
        .getByRole("status")
        .filter({ hasText: "Reconnected: caught up on 2 changes from while the connection was down." })
        .waitFor();
      expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);

      // Through resume: the subscription was sent again on the new socket with `after` = the last cursor seen
      // (and the page's other one, vulnerabilityUpdated, with the head it started from: neither asked for the head again)...
      const resubscribed = frames.sent.filter((f) => f.at >= restoredAt && f.message.type === "subscribe");
      expect(resubscribed.filter(asking("scanUpdated")).map((f) => f.message.payload.variables)).toEqual([
        { applicationId: app.id, after: lastSeen.cursor },
      ]);
      expect(resubscribed.filter(asking("vulnerabilityUpdated")).map((f) => f.message.payload.variables)).toEqual([
        { applicationId: app.id, after: expect.any(String) },
      ]);
      expect(resubscribed.filter(asking("eventLogHead"))).toEqual([]);
      // ...the service replayed the scan's start and completion on it...
      const replayed = frames.received
        .filter((f) => f.at >= restoredAt && f.message.type === "next" && f.message.payload.data?.scanUpdated)
        .map((f) => f.message.payload.data.scanUpdated);
      expect(replayed.map((e: { id: string; status: string }) => [e.id, e.status])).toEqual([
        [sca[0], "RUNNING"],
        [sca[0], "COMPLETED"],
      ]);
      // ...and no query was sent before the replayed completion arrived (which then refreshes the counts).
      const completionAt = frames.received.find(
        (f) => f.at >= restoredAt && f.message.payload?.data?.scanUpdated?.status === "COMPLETED",
      )!.at;
      expect(graphqlPosts.filter((at) => at >= restoredAt && at <= completionAt)).toEqual([]);

      // The notice, as every state of a view: no serious axe-core violation, no sideways scroll at 375 px.
      expect(await axeViolations(page)).toEqual([]);
      const { scrollWidth, innerWidth } = await overflowAt375(page);
      expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
      await page.getByRole("button", { name: "Dismiss the reconnection notice" }).click();
      expect(await page.getByText(/^Reconnected:/).count()).toBe(0);
    } finally {
      await proxy.close();
    }
  });

  it("resumes from the log's head before its first payload; falls back to a refetch when the service refuses the cursor (expired)", async () => {
    const proxy = await startTcpProxy(Number(new URL(t.baseUrl).port));
    try {
      const app = await createApplication();
      let frames!: ReturnType<typeof watchFrames>;
      const page = await signedIn(`/console/applications/${app.id}`, proxy.url, (p) => (frames = watchFrames(p)));
      await page.getByText("No scans yet").waitFor();
      const scans = page.getByRole("table", { name: /Scans/ });

      // No payload yet, but a cursor: the head of the log the subscription started from (eventLogHead,
      // asked first). Resumed from there: what happened meanwhile is replayed, nothing refetched.
      // The scans can show before the head's answer is back and the page's two subscriptions are sent
      // (the query and the socket are independent): the socket is cut once both are.
      const subscribed = (field: string) =>
        frames.sent
          .filter((f) => f.message.type === "subscribe" && f.message.payload.variables?.applicationId === app.id)
          .filter(asking(field));
      await eventually(
        async () => subscribed("scanUpdated").length > 0 && subscribed("vulnerabilityUpdated").length > 0,
      );
      const heads = frames.received
        .filter((f) => f.message.payload?.data?.eventLogHead)
        .map((f) => f.message.payload.data.eventLogHead);
      const startedAfter = subscribed("scanUpdated").map((f) => f.message.payload.variables.after);
      expect(startedAfter).toEqual([expect.any(String)]);
      expect(heads).toContain(startedAfter[0]);
      proxy.cut();
      await page.getByRole("status").filter({ hasText: "Reconnecting…" }).waitFor();
      await scanned(app.id, ["sca"]);
      let restoredAt = Date.now();
      proxy.restore();
      await scans.getByRole("row", { name: /sca/ }).getByText("completed").waitFor({ timeout: 15_000 });
      await page
        .getByRole("status")
        .filter({ hasText: "Reconnected: caught up on 2 changes from while the connection was down." })
        .waitFor();
      expect(
        frames.sent
          .filter((f) => f.at >= restoredAt && f.message.type === "subscribe")
          .filter(asking("scanUpdated"))
          .map((f) => f.message.payload.variables),
      ).toEqual([{ applicationId: app.id, after: startedAfter[0] }]);

      // A cursor past retention: the service answers CURSOR_EXPIRED; the view refetches instead.
      await scanned(app.id, ["sast"]);
      await scans.getByRole("row", { name: /sast/ }).getByText("completed").waitFor();
      proxy.cut();
      await page.getByRole("status").filter({ hasText: "Reconnecting…" }).waitFor();
      // What happened meanwhile (logged after the page's cursor) is older than retention keeps, and gone.
      const [container] = await scanned(app.id, ["container"]);
      await eventually(async () =>
        (
          (await t.request("GET", `/events?applicationId=${app.id}&limit=500`)).body as {
            data: { id: string; status: string };
          }[]
        ).some((e) => e.data.id === container && e.data.status === "completed"),
      );
      await t.app.db.pool.query("UPDATE events SET occurred_at = now() - interval '31 days'");
      expect(
        await (t.app.workers.find((w) => w.name === EVENT_RETENTION_NAME) as EventRetention).runOnce(),
      ).toBeGreaterThan(0);
      restoredAt = Date.now();
      proxy.restore();
      await scans
        .getByRole("row", { name: /container/ })
        .getByText("completed")
        .waitFor({ timeout: 15_000 });
      const onThird = (f: Frame) => f.at >= restoredAt;
      const refused = frames.received
        .filter(onThird)
        .find((f) => f.message.type === "next" && f.message.payload.errors);
      expect(refused?.message.payload.errors[0].extensions.code).toBe("CURSOR_EXPIRED");
      // Refused, then from the head again (asked anew): a cursor for the next drop, and a refetch for this one.
      const resent = frames.sent.filter(onThird).filter((f) => f.message.type === "subscribe");
      const afters = resent.filter(asking("scanUpdated")).map((f) => f.message.payload.variables.after);
      expect(afters).toEqual([expect.any(String), expect.any(String)]);
      expect(afters[1]).not.toBe(afters[0]);
      expect(resent.filter(asking("eventLogHead")).length).toBeGreaterThan(0);
      await page.getByRole("status").filter({ hasText: "Reconnected: this page's data was reloaded" }).waitFor();
      // The refresh the sast scan asked for can fall in the cut and show "The service could not be
      // reached"; the reload's answers replace it, and they can come after the notice (shown when the
      // reload is asked for): no alert is left once they are in.
      await eventually(async () => (await page.getByRole("alert").count()) === 0);
    } finally {
      await proxy.close();
    }
  });
});
