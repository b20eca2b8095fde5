// How the console and GraphiQL are served: no token, content-hashed assets cached immutable, the
// HTML revalidated, the security headers of docs/spec/CONTRACT.md §16 on every answer, nothing but listed files,
// and GraphiQL working from the service's own files (in Chromium, with no other origin).
import type { Browser } from "playwright-core";
import { runBaselineScan, type ZapReportDocument } from "../../src/scans/dast/baseline-scan.ts";
import { launchBrowser, openPage } from "../helpers/browser.ts";
import { startAll } from "../helpers/start-all.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
let production: TestApp;
let browser: Browser;

beforeAll(async () => {
  await startAll([
    startTestApp().then((app) => (t = app)),
    startTestApp({ NODE_ENV: "production" }).then((app) => (production = app)),
    launchBrowser().then((b) => (browser = b)),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await Promise.all([t?.close(), production?.close()]);
});

const raw = (base: string, path: string, init: RequestInit = {}) => fetch(base + path, { redirect: "manual", ...init });

/** The CSP's directives by name. */
const directives = (csp: string | null) =>
  new Map(
    (csp ?? "")
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...values]) => [name!, values]),
  );

function expectSecurityHeaders(res: Response) {
  const csp = directives(res.headers.get("content-security-policy"));
  const scripts = csp.get("script-src") ?? csp.get("default-src")!;
  expect(scripts).toBeDefined();
  expect(scripts).not.toContain("'unsafe-inline'");
  expect(scripts).not.toContain("'unsafe-eval'");
  expect(scripts).not.toContain("*");
  expect(csp.get("frame-ancestors")).toEqual(["'none'"]);
  expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  expect(res.headers.get("referrer-policy")).toBe("no-referrer");
  expect(res.headers.get("x-frame-options")).toBe("DENY");
  expect(res.headers.get("permissions-policy")).toMatch(/camera=\(\)/);
  expect(res.headers.get("server")).toBeNull();
  expect(res.headers.get("x-powered-by")).toBeNull();
  expect(res.headers.get("set-cookie")).toBeNull();
  expect(res.headers.get("access-control-allow-origin")).toBeNull();
  return csp;
}

async function consoleAssets(base: string): Promise<string[]> {
  const html = await (await raw(base, "/")).text();
  return [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]!);
}

describe("the console's files", () => {
  it("serves the page at / and at every /console route, without a token, revalidated on each load, under a CSP with no inline script", async () => {
    for (const path of [
      "/",
      "/console",
      "/console/applications/0190f3a4-0000-7000-8000-000000000000",
      "/console/webhooks",
    ]) {
      const res = await raw(t.baseUrl, path, { headers: { accept: "text/html" } });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(res.headers.get("cache-control")).toBe("no-cache");
      const csp = expectSecurityHeaders(res);
      expect(csp.get("default-src")).toEqual(["'self'"]);
      expect(csp.get("style-src")).toEqual(["'self'"]);
      expect(csp.get("connect-src")).toEqual(["'self'"]);
      const html = await res.text();
      expect(html).toMatch(/<div id="app"><\/div>/);
      // No inline script or style, no inline event handler, nothing from another origin.
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(html).not.toMatch(/<style|\son[a-z]+=/i);
      expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    }
    const first = await raw(t.baseUrl, "/");
    // fetch adds `Cache-Control: no-cache` to a conditional request unless told otherwise.
    const again = await raw(t.baseUrl, "/", {
      headers: { "if-none-match": first.headers.get("etag")!, "cache-control": "max-age=0" },
    });
    expect(again.status).toBe(304);
  });

  it("serves each content-hashed asset the page names, immutable for a year, brotli or gzip as the browser accepts", async () => {
    const assets = await consoleAssets(t.baseUrl);
    expect(assets.filter((a) => a.endsWith(".js")).length).toBeGreaterThanOrEqual(1);
    expect(assets.some((a) => a.endsWith(".css"))).toBe(true);
    for (const asset of assets) {
      expect(asset).toMatch(/-[A-Z0-9]{8}\.(js|css|svg)$/);
      const plain = await raw(t.baseUrl, asset, { headers: { "accept-encoding": "identity" } });
      expect(plain.status).toBe(200);
      expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(plain.headers.get("content-encoding")).toBeNull();
      expectSecurityHeaders(plain);
      const body = Buffer.from(await plain.arrayBuffer());
      const br = await raw(t.baseUrl, asset, { headers: { "accept-encoding": "br, gzip" } });
      expect(br.headers.get("content-encoding")).toBe("br");
      expect(br.headers.get("vary")).toMatch(/Accept-Encoding/i);
      const gz = await raw(t.baseUrl, asset, { headers: { "accept-encoding": "gzip" } });
      expect(gz.headers.get("content-encoding")).toBe("gzip");
      // fetch decodes both: what they carry is the file.
      expect(Buffer.from(await br.arrayBuffer()).equals(body)).toBe(true);
      expect(Buffer.from(await gz.arrayBuffer()).equals(body)).toBe(true);
    }
  });

  it("serves nothing but the listed files: unknown names, traversal and other methods are problems, never a file", async () => {
    for (const path of [
      "/console/assets/nope.js",
      "/console/assets/../../package.json",
      "/console/assets/..%2f..%2fpackage.json",
      "/console/assets/",
      `/console/assets/${"a".repeat(5000)}.js`,
    ]) {
      const res = await raw(t.baseUrl, path);
      expect([400, 404]).toContain(res.status);
      expect(res.headers.get("content-type")).toMatch(/problem\+json/);
      expectSecurityHeaders(res);
    }
    // Dot segments are resolved before routing: what is left is a console route, answered with the page.
    const dotted = await raw(t.baseUrl, "/console/assets/%2e%2e/manifest.json");
    expect(dotted.headers.get("content-type")).toBe("text/html; charset=utf-8");
    for (const method of ["POST", "PUT", "DELETE"]) {
      const res = await raw(t.baseUrl, "/", { method });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("GET, HEAD");
    }
    const head = await raw(t.baseUrl, "/", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  it("is served in production too, where GraphiQL is not", async () => {
    expect((await raw(production.baseUrl, "/")).status).toBe(200);
    const [asset] = await consoleAssets(production.baseUrl);
    expect((await raw(production.baseUrl, asset!)).status).toBe(200);
    const graphiql = await raw(production.baseUrl, "/graphql", { headers: { accept: "text/html" } });
    expect(graphiql.status).toBe(401);
    expect((await raw(production.baseUrl, "/graphiql/start.js")).status).toBe(404);
  });

  it("puts the API's own policy (nothing may load or frame it) on API answers", async () => {
    for (const path of ["/healthz", "/applications", "/openapi.json"]) {
      const csp = expectSecurityHeaders(await raw(t.baseUrl, path));
      expect(csp.get("default-src")).toEqual(["'none'"]);
    }
  });
});

describe("GraphiQL in development", () => {
  it("is served from the service's files, with its security headers, and runs a query in Chromium with no request to another origin", async () => {
    const page = await raw(t.baseUrl, "/graphql", { headers: { accept: "text/html" } });
    expect(page.status).toBe(200);
    const csp = expectSecurityHeaders(page);
    expect(csp.get("script-src")).toEqual(["'self'"]);
    const html = await page.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    const files = [...html.matchAll(/(?:src|href)="(\/graphiql\/[^"]+)"/g)].map((m) => m[1]!);
    expect(files.length).toBeGreaterThanOrEqual(4);
    for (const file of files) {
      const res = await raw(t.baseUrl, file);
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expectSecurityHeaders(res);
    }

    const p = await openPage(browser, t.baseUrl);
    try {
      const { page: tab } = p;
      await tab.goto(t.baseUrl + "/graphql");
      const queryEditor = tab.locator(".graphiql-query-editor .monaco-editor").first();
      await queryEditor.waitFor();
      // Monaco closes brackets as they are typed: insert the text, then drop what it added after the cursor.
      const replaceText = async (text: string) => {
        await tab.keyboard.press("Control+A");
        await tab.keyboard.insertText(text);
        await tab.keyboard.press("Shift+Control+End");
        await tab.keyboard.press("Delete");
      };
      await queryEditor.click();
      await replaceText("{ __typename applications(first: 1) { totalCount } }");
      await tab.getByRole("button", { name: "Headers", exact: true }).click();
      await tab.locator(".graphiql-editor-tool .monaco-editor").last().click();
      await replaceText(JSON.stringify({ Authorization: `Bearer ${await t.token()}` }));
      await tab.getByRole("button", { name: /Execute query/ }).click();
      await tab.locator(".graphiql-response").getByText('"totalCount"').waitFor();
      // Monaco lays text out with no-break spaces.
      expect((await tab.locator(".graphiql-response").innerText()).replace(/\s+/g, " ")).toMatch(
        /"__typename": "Query"/,
      );
      expect(p.foreignRequests).toEqual([]);
      expect(p.problems).toEqual([]);
    } finally {
      await p.context.close();
    }
  });
});

describe("the baseline engine scanning the service (docs/spec/CONTRACT.md §16)", () => {
  /** Every alert as "risk name path", risk being ZAP's riskcode (0 info … 3 high). */
  const alerts = (report: ZapReportDocument) =>
    report.site.flatMap((site) =>
      site.alerts.flatMap((a) =>
        a.instances.map((i) => ({ risk: Number(a.riskcode), name: a.name, path: new URL(i.uri).pathname })),
      ),
    );

  it.each([
    ["the console", "development", "/"],
    ["GraphiQL", "development", "/graphql"],
    ["the console", "production", "/"],
  ])("finds nothing of medium risk or above in %s (%s)", async (_what, mode, start) => {
    const base = mode === "production" ? production.baseUrl : t.baseUrl;
    let requests = 0;
    const report = await runBaselineScan(base + start, {
      targetPolicy: { allowPrivateTargets: true },
      onSummary: (s) => (requests = s.requests),
    });
    expect(requests).toBeGreaterThan(1); // it crawled past the first page
    expect(alerts(report).filter((a) => a.risk >= 2)).toEqual([]);
  });
});
