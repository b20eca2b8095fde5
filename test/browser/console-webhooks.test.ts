// The console's webhooks view against a real service and a real HTTPS receiver, by accessible role and
// name: a delivery held back while its endpoint fails shows as waiting, with its attempts; Recover
// re-queues what failed or was dropped and says how many; a refused recovery shows the API's error.
// axe-core and 375 px on each of these states.
import type { Browser, Page } from "playwright-core";
import type { WebhookDispatcher } from "../../src/dispatcher/dispatcher.ts";
import type { EventType } from "../../src/events/catalog.ts";
import { recordEvent } from "../../src/events/outbox.ts";
import { newId } from "../../src/ids.ts";
import {
  axeViolations,
  launchBrowser,
  openPage,
  overflowAt375,
  closeCheckedPages,
  screenshotPath,
  type ConsolePage,
} from "../helpers/browser.ts";
import { startAll } from "../helpers/start-all.ts";
import { startHttpsReceiver, type HttpsReceiver } from "../helpers/https-receiver.ts";
import { createSelfSignedCert, type SelfSignedCert } from "../helpers/self-signed-cert.ts";
import { dispatcherTrusting, startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
let dispatcher: WebhookDispatcher;
let browser: Browser;
let cert: SelfSignedCert;
let receiver: HttpsReceiver;
const opened: ConsolePage[] = [];

beforeAll(async () => {
  cert = createSelfSignedCert();
  receiver = await startHttpsReceiver(cert);
  // A failed attempt is retried in ten minutes: what follows it to the same endpoint waits meanwhile.
  await startAll([
    startTestApp({
      WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
      WEBHOOK_TIMEOUT_MS: "1000",
      WEBHOOK_RETRY_INITIAL_MS: "600000",
    }).then((app) => (t = app)),
    launchBrowser().then((b) => (browser = b)),
  ]);
  dispatcher = dispatcherTrusting(t, cert.cert);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await receiver?.close();
  cert?.remove();
});
afterEach(() => closeCheckedPages(opened));

async function subscription(name: string, events: EventType[]): Promise<string> {
  const res = await t.request("POST", "/webhooks", {
    body: { name, url: receiver.url(`/${name}`), events, secret: "console-webhooks-secret" },
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

/** An event committed as the service commits them (with its outbox row); its id. */
const commit = (type: "scan.completed" | "scan.failed") =>
  t.app.db.prisma.$transaction((tx) =>
    recordEvent(tx, type, {
      id: newId(),
      applicationId: newId(),
      scanType: "sast",
      status: type.slice(5),
      triggeredBy: "console-test",
      startedAt: null,
      completedAt: null,
      summary: null,
    }),
  );

/** Dispatcher passes until one has nothing to fan out or attempt (the retries are ten minutes away). */
async function drain() {
  for (;;) {
    const pass = await dispatcher.runOnce();
    if (pass.fannedOut + pass.attempted === 0) return;
  }
}

async function deliveriesPage(webhookId: string): Promise<Page> {
  const p = await openPage(browser, t.baseUrl);
  opened.push(p);
  await p.page.goto(`${t.baseUrl}/#token=${await t.token()}`);
  await p.page.getByRole("heading", { name: "Portfolio", level: 1 }).waitFor();
  await p.page.goto(`${t.baseUrl}/console/webhooks/${webhookId}`);
  await p.page.getByRole("heading", { name: "Deliveries", level: 2 }).waitFor();
  return p.page;
}

async function accessibleAndNarrow(page: Page, state: string) {
  expect(await axeViolations(page)).toEqual([]);
  const { scrollWidth, innerWidth } = await overflowAt375(page, screenshotPath("webhooks", state));
  expect(innerWidth).toBe(375);
  expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
}

const row = (page: Page, eventId: string) =>
  page.getByRole("table", { name: /Deliveries/ }).getByRole("row", { name: new RegExp(eventId) });

describe("the webhook deliveries view", () => {
  it("shows a delivery held back while the endpoint fails as waiting, and the failed one with its attempt", async () => {
    const id = await subscription("held", ["scan.failed"]);
    receiver.answer = (req) => (req.path === "/held" ? { status: 503 } : { status: 204 });
    const first = await commit("scan.failed");
    await dispatcher.runOnce(); // attempted, 503: retried in ten minutes
    const second = await commit("scan.failed");
    await dispatcher.runOnce(); // held behind that retry
    expect(receiver.requests.filter((r) => r.path === "/held")).toHaveLength(1);

    const page = await deliveriesPage(id);
    const held = row(page, second);
    await held.getByText("waiting: held back until the endpoint recovers").waitFor();
    expect(await held.getByRole("cell").allInnerTexts()).toEqual([
      expect.stringMatching(/^pending\s+waiting: held back until the endpoint recovers$/),
      expect.any(String),
      "when the endpoint recovers",
      "none yet",
      "queued: a copy is pending",
    ]);
    // A pending delivery is not offered again (the service would answer 409); a sent one is.
    expect(await held.getByRole("button", { name: /^Redeliver/ }).count()).toBe(0);
    const failing = row(page, first);
    const attempts = failing.getByRole("list", { name: "1 attempt" });
    expect(await attempts.getByRole("listitem").allInnerTexts()).toEqual([expect.stringMatching(/: 503 in \d+ ms$/)]);
    expect(await failing.getByText("waiting:").count()).toBe(0);
    await accessibleAndNarrow(page, "deliveries-waiting");
  });

  it("recovers the deliveries a subscription's receiver dropped: says how many were queued, and they go out", async () => {
    const id = await subscription("refusing", ["scan.completed"]);
    receiver.answer = (req) => (req.path === "/refusing" ? { status: 422 } : { status: 204 });
    const dropped = [await commit("scan.completed"), await commit("scan.completed")];
    await drain();
    const page = await deliveriesPage(id);
    for (const eventId of dropped) await row(page, eventId).getByText("dropped").waitFor();
    // Given up on, each may be sent again.
    for (const eventId of dropped)
      expect(
        await row(page, eventId)
          .getByRole("button", { name: /^Redeliver/ })
          .count(),
      ).toBe(1);

    receiver.answer = () => ({ status: 204 }); // the endpoint is fixed
    await page.getByRole("button", { name: "Recover" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: /^Recovered: 2 deliveries of events since .+ queued again as new deliveries\.$/ })
      .waitFor();
    // The log shows them: a new pending delivery per event, beside the dropped one.
    for (const eventId of dropped) {
      // Its status cell, right after the event's id (the dropped row now says a copy is pending too).
      await row(page, eventId)
        .filter({ hasText: new RegExp(`${eventId}\\s*pending`) })
        .waitFor();
      expect(await row(page, eventId).count()).toBe(2);
      expect(
        await row(page, eventId)
          .getByRole("button", { name: /^Redeliver/ })
          .count(),
      ).toBe(0);
    }
    await accessibleAndNarrow(page, "deliveries-recovered");

    await drain();
    await page.getByRole("button", { name: "Refresh deliveries" }).click();
    for (const eventId of dropped)
      await row(page, eventId)
        .filter({ hasText: "delivered" })
        .getByRole("listitem")
        .filter({ hasText: ": 204 in" })
        .waitFor();
    expect(receiver.requests.filter((r) => r.path === "/refusing")).toHaveLength(4);

    // What has been received since is not sent twice.
    await page.getByRole("button", { name: "Recover" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: /^Nothing to recover: no event since .+ has a failed or dropped delivery still unsent\.$/ })
      .waitFor();
  });

  it("shows a refused recovery as the API states it (a disabled subscription)", async () => {
    const id = await subscription("disabled", ["scan.completed"]);
    const page = await deliveriesPage(id);
    expect((await t.request("PUT", `/webhooks/${id}`, { body: { status: "disabled" } })).status).toBe(200);
    await page.getByLabel("Since").fill("2026-01-01T00:00");
    await page.getByRole("button", { name: "Recover" }).click();
    const alert = page.getByRole("alert");
    await alert.getByText("Conflict").waitFor();
    expect(await alert.innerText()).toMatch(/disabled/i);
    await accessibleAndNarrow(page, "deliveries-recover-refused");
  });
});
