// Signing in with the identity provider (docs/spec/CONTRACT.md §18), as a person does: a real
// Chromium, a real OpenID provider (oidc-provider, its own login and consent pages), a real
// service. The portfolio of the person's team only; three renewals of 60 s access tokens with a
// live update after each (none missed, no reload); sign-out at the provider that Back cannot undo;
// and each way a sign-in goes wrong, with its sentence.
import type { Browser, Page } from "playwright-core";
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
import { CONSOLE_CLIENT_ID, startTestProvider, type TestProvider } from "../helpers/oidc-provider.ts";
import { startAll } from "../helpers/start-all.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

const PROVIDER_NAME = "Example SSO";
const READ_SCOPES = "applications:read scans:read vulnerabilities:read policies:read webhooks:read";
const USERS = { alice: ["payments"], bob: ["identity"], carol: [] };

let provider: TestProvider;
/** Access tokens of 8 s, renewed at 6 s: a refused renewal shows soon. */
let shortLived: TestProvider;
/** The same, with refresh tokens that expire after 4 s. */
let expiring: TestProvider;
let t: TestApp;
let browser: Browser;
const opened: ConsolePage[] = [];
const ids: Record<string, string> = {};

const serviceEnv = (p: TestProvider, extra: Record<string, string> = {}) => ({
  OIDC_ISSUER: p.issuer,
  OIDC_CLIENT_ID: CONSOLE_CLIENT_ID,
  OIDC_RESOURCE: p.resource,
  OIDC_SCOPES: `openid profile email offline_access ${READ_SCOPES}`,
  OIDC_PROVIDER_NAME: PROVIDER_NAME,
  AUTH_AUDIENCE: p.resource,
  AUTH_TEAMS_CLAIM: "groups",
  SCAN_DURATION_MS: "0",
  ...extra,
});

/** A service of its own against `p`, for one failure path; closed after the file. */
const extraServices: TestApp[] = [];
async function serviceFor(p: TestProvider, extra: Record<string, string> = {}): Promise<TestApp> {
  const service = await startTestApp(serviceEnv(p, extra));
  extraServices.push(service);
  await p.registerConsole(service.baseUrl);
  return service;
}

beforeAll(async () => {
  await startAll([
    startTestProvider({ users: USERS }).then((p) => (provider = p)),
    startTestProvider({ users: USERS, accessTokenTtlSeconds: 8 }).then((p) => (shortLived = p)),
    startTestProvider({ users: USERS, accessTokenTtlSeconds: 8, refreshTokenTtlSeconds: 4 }).then(
      (p) => (expiring = p),
    ),
    launchBrowser().then((b) => (browser = b)),
  ]);
  issuers.push(provider.issuer, shortLived.issuer, expiring.issuer);
  t = await startTestApp(serviceEnv(provider), { workers: [DISPATCHER_NAME] });
  await provider.registerConsole(t.baseUrl);
  for (const [name, owner] of [
    ["payments-ledger", "payments"],
    ["identity-directory", "identity"],
  ]) {
    const res = await t.request("POST", "/applications", { body: { name, owner, criticality: "high" } });
    expect(res.status).toBe(201);
    ids[name!] = res.body.id;
  }
}, 60_000);
afterAll(async () => {
  await browser?.close();
  for (const service of extraServices) await service.close();
  await t?.close();
  await provider?.close();
  await shortLived?.close();
  await expiring?.close();
});
afterEach(async () => {
  // The provider's development pages import a web font from the internet: not the console's requests.
  for (const p of opened) p.foreignRequests = p.foreignRequests.filter((url) => !isProviderRequest(url));
  await closeCheckedPages(opened);
});

/** Issuers the console is expected to call: the providers, and one that is gone. */
const issuers: string[] = [];
const isProviderRequest = (url: string) =>
  issuers.some((issuer) => url.startsWith(`${issuer}/`)) || url.startsWith("https://fonts.googleapis.com/");

async function pageAt(service: TestApp): Promise<ConsolePage> {
  const p = await openPage(browser, service.baseUrl);
  opened.push(p);
  return p;
}

/**
 * Clicks the provider's button and signs in as `login` on its page; returns on its consent page,
 * or past it when `consent` is given. The login page has a "[ Cancel ]" link too: a caller about
 * to cancel must not find that one while the login is still being submitted.
 */
async function signInAtProvider(page: Page, login: string, { consent = true } = {}) {
  await page.getByRole("button", { name: `Sign in with ${PROVIDER_NAME}` }).click();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("any password");
  await page.getByRole("button", { name: "Sign-in" }).click();
  const allow = page.getByRole("button", { name: "Continue" });
  if (consent) await allow.click();
  else await allow.waitFor();
}

const storedToken = (page: Page) => page.evaluate(() => sessionStorage.getItem("appsec.console.token"));

async function expectAccessible(page: Page, view: string) {
  expect(await axeViolations(page)).toEqual([]);
  const { scrollWidth, innerWidth } = await overflowAt375(page, screenshotPath("sign-in", view));
  expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
}

const signInHeading = (page: Page) => page.getByRole("heading", { name: "Sign in to the AppSec console" });
const alert = (page: Page) => page.getByRole("alert");

/** Waits for an alert saying `text`; when none comes, fails with where the page is and what it shows. */
async function alertSaying(page: Page, text: string | RegExp, { timeout = 10_000 } = {}) {
  const sentence = alert(page).getByText(text);
  try {
    await sentence.waitFor({ timeout });
  } catch (err) {
    const shown = await page
      .locator("body")
      .innerText({ timeout: 1000 })
      .catch(() => "?");
    throw new Error(`No alert saying ${String(text)} at ${page.url()}; the page shows:\n${shown.slice(0, 1500)}`, {
      cause: err,
    });
  }
  return sentence;
}

it("signs in at the provider, shows the person's team only, stays signed in across three renewals with every live update, and signs out for good", async () => {
  const { page } = await pageAt(t);
  await page.goto(t.baseUrl + "/");
  await signInHeading(page).waitFor();
  await expectAccessible(page, "sign-in page");

  await signInAtProvider(page, "alice");
  await page.getByRole("heading", { name: "Portfolio", level: 1 }).waitFor();
  await page.getByText("payments-ledger").waitFor();
  expect(await page.getByText("identity-directory").count()).toBe(0);
  // The code and state left the address bar; the tokens live in this tab's sessionStorage only.
  expect(page.url()).toBe(`${t.baseUrl}/`);
  expect(await page.evaluate(() => localStorage.length)).toBe(0);
  expect(await page.evaluate(() => document.cookie)).toBe("");
  await page.getByRole("status").filter({ hasText: "Live" }).waitFor();

  // On the application's page, whose scans table shows each scan as it is told.
  await page.getByRole("link", { name: "payments-ledger" }).click();
  await page.getByText("No scans yet").waitFor();
  await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
  const scanRows = page.getByRole("table", { name: /Scans/ }).locator("[data-scan-id]");
  for (let renewal = 1; renewal <= 3; renewal++) {
    const before = await storedToken(page);
    // Renewed at three quarters of 60 s; the socket reconnects with the new token.
    await page.waitForFunction((old) => sessionStorage.getItem("appsec.console.token") !== old, before, {
      timeout: 60_000,
      polling: 100,
    });
    // A scan committed while the socket comes back with the new token: replayed, not missed.
    const scan = await t.request("POST", `/applications/${ids["payments-ledger"]}/scans`, {
      body: { scanType: "sast" },
    });
    expect(scan.status).toBe(202);
    await t.app.scanRunner.runOnce();
    await page.locator(`[data-scan-id="${scan.body.id}"]`).getByText("completed").waitFor({ timeout: 10_000 });
    expect(await scanRows.count()).toBe(renewal);
    await page.getByRole("status").filter({ hasText: "Live" }).waitFor();
  }
  expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
  await expect(signInHeading(page).count()).resolves.toBe(0);

  // Sign-out ends the provider's session too, and comes back to the sign-in page.
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByRole("button", { name: "Yes, sign me out" }).click();
  await signInHeading(page).waitFor();
  expect(page.url()).toBe(`${t.baseUrl}/`);
  expect(await storedToken(page)).toBeNull();
  // Back does not bring the signed-in page back.
  await page.goBack();
  await page.waitForLoadState();
  expect(await page.getByRole("heading", { name: "payments-ledger" }).count()).toBe(0);
  expect(await page.evaluate(() => sessionStorage.getItem("appsec.console.token"))).toBeNull();
  // And the provider asks who it is again.
  await page.goto(t.baseUrl + "/");
  await page.getByRole("button", { name: `Sign in with ${PROVIDER_NAME}` }).click();
  await page.locator('input[name="login"]').waitFor();
}, 240_000);

it("tells a person in no team that the provider's groups name none of theirs", async () => {
  const { page } = await pageAt(t);
  await page.goto(t.baseUrl + "/");
  await signInAtProvider(page, "carol");
  await page.getByText(`You are in no team at ${PROVIDER_NAME}`).waitFor();
  await expectAccessible(page, "no team");
});

it("says so when consent is refused at the provider", async () => {
  const { page } = await pageAt(t);
  await page.goto(t.baseUrl + "/");
  await signInAtProvider(page, "bob", { consent: false });
  await page.getByRole("link", { name: "[ Cancel ]" }).click();
  await alertSaying(page, `The sign-in was cancelled at ${PROVIDER_NAME}`);
  expect(await storedToken(page)).toBeNull();
  await expectAccessible(page, "consent refused");
});

it("refuses an answer whose state is not the one this tab sent", async () => {
  const { page } = await pageAt(t);
  await page.goto(t.baseUrl + "/");
  // A sign-in this tab started, then an answer it did not ask for (a link someone sent).
  await page.getByRole("button", { name: `Sign in with ${PROVIDER_NAME}` }).click();
  await page.locator('input[name="login"]').waitFor();
  await page.goto(`${t.baseUrl}/console/callback?code=forged&state=forged&iss=${encodeURIComponent(provider.issuer)}`);
  await alertSaying(page, /does not match the sign-in this tab started/);
  expect(page.url()).toBe(`${t.baseUrl}/`);
  expect(await storedToken(page)).toBeNull();
});

it("says which scopes the provider must grant when it granted none of the service's", async () => {
  const service = await serviceFor(provider, { OIDC_SCOPES: "openid profile email" });
  const { page } = await pageAt(service);
  await page.goto(service.baseUrl + "/");
  await signInAtProvider(page, "alice");
  const sentence = await alertSaying(page, /granted the console none of the service's scopes/);
  expect(await sentence.innerText()).toContain("applications:read");
  expect(await sentence.innerText()).toContain("not something you did");
  expect(await storedToken(page)).toBeNull();
  await expectAccessible(page, "no scope");
});

it("says so when the provider cannot be reached", async () => {
  const gone = await startTestProvider();
  const issuer = gone.issuer;
  issuers.push(issuer);
  await gone.close();
  const service = await serviceFor(provider, { OIDC_ISSUER: issuer });
  const { page } = await pageAt(service);
  await page.goto(service.baseUrl + "/");
  await page.getByRole("button", { name: `Sign in with ${PROVIDER_NAME}` }).click();
  await alertSaying(page, `${PROVIDER_NAME} could not be reached, so the sign-in could not start.`);
  await expectAccessible(page, "provider unreachable");
});

it("ends the session with a sentence when the refresh token has expired", async () => {
  const service = await serviceFor(expiring);
  const { page } = await pageAt(service);
  await page.goto(service.baseUrl + "/");
  await signInAtProvider(page, "alice");
  await page.getByRole("heading", { name: "Portfolio", level: 1 }).waitFor();
  await alertSaying(page, `${PROVIDER_NAME} would not renew it: its refresh token has expired or was revoked.`, {
    timeout: 15_000,
  });
  expect(await storedToken(page)).toBeNull();
});

it("ends the session with a sentence when the refresh token was revoked", async () => {
  const service = await serviceFor(shortLived);
  const { page } = await pageAt(service);
  await page.goto(service.baseUrl + "/");
  await signInAtProvider(page, "bob");
  await page.getByRole("heading", { name: "Portfolio", level: 1 }).waitFor();
  // Revoked at the provider (as an administrator or a security tool would), the renewal is refused.
  const refreshToken = await page.evaluate(
    () => JSON.parse(sessionStorage.getItem("appsec.console.provider-session")!).refreshToken as string,
  );
  const revoked = await fetch(`${shortLived.issuer}/token/revocation`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token: refreshToken, client_id: CONSOLE_CLIENT_ID }),
  });
  expect(revoked.status).toBe(200);
  await alertSaying(page, `${PROVIDER_NAME} would not renew it: its refresh token has expired or was revoked.`, {
    timeout: 15_000,
  });
  expect(await storedToken(page)).toBeNull();
});
