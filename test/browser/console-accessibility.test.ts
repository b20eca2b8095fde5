// Every view of the console: no serious or critical axe-core violation, no sideways scrolling at
// 375 px, no request to another origin; and a journey by keyboard alone.
import type { Browser, Page } from "playwright-core";
import { DISPATCHER_NAME } from "../../src/dispatcher/dispatcher.ts";
import {
  axeViolations,
  launchBrowser,
  openPage,
  overflowAt375,
  screenshotPath,
  tabTo,
  type ConsolePage,
} from "../helpers/browser.ts";
import { startAll } from "../helpers/start-all.ts";
import { eventually } from "../helpers/scan-engines.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
let browser: Browser;
let appId: string;
let webhookId: string;

beforeAll(async () => {
  await startAll([
    startTestApp({ SCAN_DURATION_MS: "0", WEBHOOK_ALLOW_PRIVATE_TARGETS: "true" }).then((app) => (t = app)),
    launchBrowser().then((b) => (browser = b)),
  ]);
  const app = await t.request("POST", "/applications", {
    body: {
      name: "a11y-payments-api-with-a-rather-long-name-that-must-wrap",
      owner: "team-payments",
      criticality: "critical",
      tags: ["pci"],
      repoUrl: "https://git.example.com/payments/payments-api",
    },
  });
  appId = app.body.id;
  await t.request("POST", "/policies", {
    body: {
      name: "a11y-no-criticals",
      action: "block",
      conditions: { vulnerabilitySeverity: "critical", applicationIds: [appId] },
    },
  });
  for (const scanType of ["sast", "sca"])
    await t.request("POST", `/applications/${appId}/scans`, { body: { scanType } });
  while ((await t.app.scanRunner.runOnce()) > 0);
  // A decision on one of its vulnerabilities, so a vulnerability's details show an analysis.
  const withCve = (
    (await t.request("GET", `/applications/${appId}/vulnerabilities?limit=500`)).body as { cve: string | null }[]
  ).find((v) => v.cve)!;
  const vex = {
    "@context": "https://openvex.dev/ns/v0.2.0",
    "@id": "https://vex.example.com/a11y/1",
    author: "a11y tests",
    timestamp: new Date().toISOString(),
    version: 1,
    statements: [
      { vulnerability: { name: withCve.cve }, status: "not_affected", justification: "component_not_present" },
    ],
  };
  expect((await t.request("POST", `/applications/${appId}/vex`, { body: vex })).body).toMatchObject({ applied: 1 });
  const webhook = await t.request("POST", "/webhooks", {
    body: {
      name: "a11y-hook",
      url: "https://127.0.0.1:9/unreachable",
      events: ["scan.completed"],
      secret: "a11y-secret",
    },
  });
  webhookId = webhook.body.id;
  // An event for it, delivered by the dispatcher (and failing: nothing listens there), for the log.
  t.app.workers.find((w) => w.name === DISPATCHER_NAME)!.start();
  await t.request("POST", `/applications/${appId}/scans`, { body: { scanType: "dast" } });
  while ((await t.app.scanRunner.runOnce()) > 0);
  await eventually(async () =>
    ((await t.request("GET", `/webhooks/${webhookId}/deliveries`)).body as { attempts: unknown[] }[]).some(
      (d) => d.attempts.length,
    ),
  );
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

interface View {
  name: string;
  open(page: Page): Promise<void>;
}

const go = (pathname: () => string, ready: (page: Page) => Promise<unknown>) => async (page: Page) => {
  await page.goto(`${t.baseUrl}/#token=${await t.token()}`);
  await page.getByRole("heading", { name: "Portfolio", level: 1 }).waitFor();
  await page.goto(t.baseUrl + pathname()); // the token stays in the tab's sessionStorage
  await ready(page);
};

const views: View[] = [
  {
    name: "sign-in",
    open: async (page) => void (await page.goto(t.baseUrl + "/"), await page.getByLabel("Access token").waitFor()),
  },
  {
    name: "portfolio",
    open: go(
      () => "/",
      (page) =>
        page
          .getByRole("table", { name: "Applications" })
          .getByRole("row", { name: /a11y-payments/ })
          .waitFor(),
    ),
  },
  {
    name: "application",
    open: go(
      () => `/console/applications/${appId}`,
      (page) => page.getByRole("table", { name: /Vulnerabilities/ }).waitFor(),
    ),
  },
  {
    name: "application with a vulnerability's details and the trend's numbers open",
    open: go(
      () => `/console/applications/${appId}?status=ACCEPTED`,
      async (page) => {
        await page
          .getByRole("img", { name: /^Chart: / })
          .locator("canvas")
          .waitFor();
        await page
          .getByRole("button", { name: /^Details of / })
          .first()
          .click();
        await page.getByRole("table", { name: /^History of / }).waitFor();
        await page.getByText("The chart's numbers").click();
        await page.getByRole("table", { name: /the count at each point/ }).waitFor();
      },
    ),
  },
  {
    name: "application with a vulnerability's triage form open",
    open: go(
      () => `/console/applications/${appId}?status=OPEN`,
      async (page) => {
        await page
          .getByRole("button", { name: /^Triage / })
          .first()
          .click();
        await page.getByRole("form", { name: /^Triage of / }).waitFor();
      },
    ),
  },
  {
    name: "remediation",
    open: go(
      () => "/console/remediation",
      async (page) => {
        await page.getByRole("table", { name: /^Remediation by severity/ }).waitFor();
        await page
          .getByRole("img", { name: /^Chart: Open vulnerabilities by age/ })
          .locator("canvas")
          .waitFor();
      },
    ),
  },
  {
    name: "webhooks",
    open: go(
      () => "/console/webhooks",
      (page) => page.getByRole("table", { name: "Subscriptions" }).waitFor(),
    ),
  },
  {
    name: "webhook deliveries",
    open: go(
      () => `/console/webhooks/${webhookId}`,
      (page) => page.getByRole("table", { name: /Deliveries/ }).waitFor(),
    ),
  },
  {
    name: "not found",
    open: go(
      () => "/console/nowhere",
      (page) => page.getByRole("heading", { name: "Page not found" }).waitFor(),
    ),
  },
];

describe.each(views)("the $name view", (view) => {
  let p: ConsolePage;
  beforeAll(async () => {
    p = await openPage(browser, t.baseUrl);
    await view.open(p.page);
  });
  afterAll(() => p.context.close());

  it("has no serious or critical axe-core violation", async () => {
    expect(await axeViolations(p.page)).toEqual([]);
  });

  it("does not scroll sideways at 375 px", async () => {
    const { scrollWidth, innerWidth } = await overflowAt375(p.page, screenshotPath("accessibility", view.name));
    expect(innerWidth).toBe(375);
    expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
  });

  it("asks nothing of another origin and logs no error", () => {
    expect(p.foreignRequests).toEqual([]);
    expect(p.problems).toEqual([]);
  });
});

it("axe, as run here, does report a violation when the page has one (the checks above can fail)", async () => {
  const p = await openPage(browser, t.baseUrl);
  try {
    await views[0]!.open(p.page);
    await p.page.evaluate(() => document.querySelector("form")!.append(document.createElement("button")));
    expect((await axeViolations(p.page)).map((v) => v.id)).toContain("button-name");
  } finally {
    await p.context.close();
  }
});

describe("by keyboard alone", () => {
  it("signs in, goes from the portfolio to an application, triggers a scan and opens a vulnerability's details with Tab, Enter and Space", async () => {
    const p = await openPage(browser, t.baseUrl);
    const { page } = p;
    try {
      await page.goto(t.baseUrl + "/");
      await page.getByLabel("Access token").waitFor();
      await tabTo(page, "the token field", (el) => el.tag === "textarea");
      await page.keyboard.insertText(await t.token());
      await tabTo(page, "the Sign in button", (el) => el.tag === "button" && el.name === "Sign in");
      await page.keyboard.press("Enter");
      await page
        .getByRole("table", { name: "Applications" })
        .getByRole("row", { name: /a11y-payments/ })
        .waitFor();

      await tabTo(page, "the application's link", (el) => el.tag === "a" && el.name.startsWith("a11y-payments"));
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { level: 1, name: /a11y-payments/ }).waitFor();
      // Focus moved to the new view's heading, so Tab continues from the top of the view.
      expect(await page.evaluate(() => document.activeElement?.tagName)).toBe("H1");

      await tabTo(page, "the scan type", (el) => el.tag === "select" && el.name === "Scan type");
      await page.keyboard.press("ArrowDown"); // sast → dast
      await page.keyboard.press("ArrowDown"); // → sca
      expect(await page.getByLabel("Scan type").inputValue()).toBe("SCA");
      await tabTo(page, "Trigger scan", (el) => el.tag === "button" && el.name === "Trigger scan");
      await page.keyboard.press("Space");
      await page.getByRole("status").filter({ hasText: "A sca scan is queued." }).waitFor();

      await tabTo(page, "the VEX file picker", (el) => el.tag === "input" && el.name === "VEX document");
      await tabTo(
        page,
        "a vulnerability's Details button",
        (el) => el.tag === "button" && el.name.startsWith("Details of "),
      );
      await page.keyboard.press("Enter");
      await page.getByRole("table", { name: /^History of / }).waitFor();
      expect(p.foreignRequests).toEqual([]);
      expect(p.problems).toEqual([]);
    } finally {
      await p.context.close();
      while ((await t.app.scanRunner.runOnce()) > 0);
    }
  });
});
