// The console in Chromium against the real service (dist/main.js, its own process,
// NODE_ENV=production), seeded through the API with BENCH_CONSOLE_APPLICATIONS (500) applications,
// a policy and scans of a fifth of them. Prints:
//   - the initial JavaScript: every script the page at / loads (its module and what it preloads),
//     as served raw, gzip and brotli (budget: 150 KB compressed);
//   - the portfolio of every application, interactive: from navigation to the moment its last row
//     is painted (a MutationObserver installed before the page's own scripts, then a frame), cold
//     (first visit) and warm (cached assets), and how long one more frame takes then;
//   - live status paint: scans triggered through REST while the portfolio is open, each row's
//     status painted (the page's Date.now() from its MutationObserver) against the commit times the
//     service recorded (startedAt for running, completedAt for completed); beside it, in the same
//     run, a bare graphql-ws client's arrival of the same events, so the page's share is visible;
//   - sign-in through an OpenID provider (oidc-provider in this process, CONTRACT §18): from the
//     provider's redirect back to /console/callback to the last portfolio row painted, in a fresh
//     browser context each run (cold: the code exchange, the service's check of the token, the
//     portfolio query).
import { randomBytes } from "node:crypto";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { mintToken } from "../src/auth/mint-token.ts";
import { launchBrowser, prepareChromium } from "../test/helpers/browser.ts";
import { CONSOLE_CLIENT_ID, startTestProvider } from "../test/helpers/oidc-provider.ts";
import { startServiceProcess } from "../test/helpers/service-process.ts";
import { benchDatabase } from "./database.ts";
import { extraServiceFlags } from "./service-flags.ts";

const APPLICATIONS = Number(process.env.BENCH_CONSOLE_APPLICATIONS ?? 500);
const LIVE_SCANS = Number(process.env.BENCH_CONSOLE_LIVE_SCANS ?? 10);
const RUNS = Number(process.env.BENCH_CONSOLE_RUNS ?? 5);
const SECRET = "bench-secret-bench-secret-bench-secret-00";
const BUDGET_BYTES = 150 * 1024;

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

async function inParallel<T>(items: T[], limit: number, work: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

export async function runConsoleBench(): Promise<void> {
  const database = await benchDatabase();
  const provider = await startTestProvider();
  const service = await startServiceProcess({
    env: {
      DATABASE_URL: database.url,
      NODE_ENV: "production",
      AUTH_JWT_SECRET: SECRET,
      WEBHOOK_SECRET_KEYS: randomBytes(32).toString("base64"),
      LOG_LEVEL: "warn",
      RATE_LIMIT_PER_MINUTE: "100000000",
      SCAN_DURATION_MS: "400",
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: CONSOLE_CLIENT_ID,
      OIDC_RESOURCE: provider.resource,
      OIDC_SCOPES: "openid applications:read scans:read vulnerabilities:read policies:read",
      AUTH_AUDIENCE: provider.resource,
    },
    nodeArgs: extraServiceFlags(),
  });
  const base = service.baseUrl;
  await provider.registerConsole(service.baseUrl);
  const token = await mintToken({ secret: SECRET, sub: "bench", scopes: ["admin"], audience: provider.resource });
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<any>;
  };
  console.log(`Browser: ${await prepareChromium()}`);
  const browser = await launchBrowser();
  try {
    // Seed through the API.
    const ids: string[] = [];
    await inParallel([...Array(APPLICATIONS).keys()], 16, async (i) => {
      const app = await api("POST", "/applications", {
        name: `bench-app-${String(i).padStart(4, "0")}`,
        owner: `team-${i % 17}`,
        criticality: ["low", "medium", "high", "critical"][i % 4],
      });
      ids.push(app.id);
    });
    await api("POST", "/policies", {
      name: "bench-no-criticals",
      action: "block",
      conditions: { vulnerabilitySeverity: "critical" },
    });
    const scanned = ids.slice(0, Math.floor(APPLICATIONS / 5));
    await inParallel(
      scanned,
      8,
      async (id) => void (await api("POST", `/applications/${id}/scans`, { scanType: "sca" })),
    );
    for (let deadline = Date.now() + 120_000; ;) {
      const scans = await Promise.all(scanned.slice(-5).map((id) => api("GET", `/applications/${id}/scans`)));
      if (scans.every((list) => list[0]?.status === "completed")) break;
      if (Date.now() > deadline) throw new Error("seed scans did not complete");
      await new Promise((r) => setTimeout(r, 200));
    }

    // Initial JavaScript: what the page at / loads.
    const context = await browser.newContext();
    const page = await context.newPage();
    const scripts = new Set<string>();
    page.on("request", (r) => {
      if (r.resourceType() === "script") scripts.add(r.url());
    });
    await page.goto(base + "/");
    await page.getByRole("button", { name: /^Sign in with/ }).waitFor();
    await context.close();
    let raw = 0;
    let gzip = 0;
    let brotli = 0;
    let servedBr = 0;
    for (const url of scripts) {
      const body = Buffer.from(await (await fetch(url, { headers: { "accept-encoding": "identity" } })).arrayBuffer());
      raw += body.length;
      gzip += gzipSync(body, { level: 9 }).length;
      brotli += brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
      const sent = await fetch(url, { headers: { "accept-encoding": "br" } });
      servedBr += Number(sent.headers.get("content-length"));
      await sent.arrayBuffer();
    }
    console.log(
      `Initial JavaScript of / (${scripts.size} files): ${kb(raw)} raw, ${kb(gzip)} gzip, ${kb(brotli)} brotli (served br: ${kb(servedBr)}); budget ${kb(BUDGET_BYTES)} compressed: ${Math.max(gzip, brotli) < BUDGET_BYTES ? "within" : "OVER"}`,
    );

    // The portfolio, interactive.
    const observeRows = (expected: number) => {
      const w = window as unknown as { rowsPaintedAt?: number };
      new MutationObserver((_, observer) => {
        if (document.querySelectorAll("table tbody tr").length < expected) return;
        observer.disconnect();
        requestAnimationFrame(() => setTimeout(() => (w.rowsPaintedAt = performance.now())));
      }).observe(document, { subtree: true, childList: true });
    };
    const portfolio = await browser.newContext();
    const timings: { run: number; ms: number; scriptsMs: number; queryStartMs: number; queryMs: number }[] = [];
    for (let run = 0; run < RUNS; run++) {
      const tab = await portfolio.newPage();
      await tab.addInitScript(observeRows, APPLICATIONS);
      await tab.goto(`${base}/#token=${token}`);
      await tab.waitForFunction(
        () => (window as unknown as { rowsPaintedAt?: number }).rowsPaintedAt !== undefined,
        null,
        { timeout: 30_000 },
      );
      // Where the time went: the scripts, then the portfolio query (the first POST /graphql after sign-in), then rendering.
      timings.push({
        run,
        ...(await tab.evaluate(() => {
          const resources = performance.getEntriesByType("resource") as PerformanceResourceTiming[];
          const scripts = resources.filter((r) => r.initiatorType === "script" || r.name.endsWith(".js"));
          const query = resources.filter((r) => r.name.endsWith("/graphql") && r.initiatorType === "fetch").at(-1)!;
          return {
            ms: (window as unknown as { rowsPaintedAt: number }).rowsPaintedAt,
            scriptsMs: Math.max(...scripts.map((r) => r.responseEnd)),
            queryStartMs: query.startTime,
            queryMs: query.responseEnd - query.startTime,
          };
        })),
      });
      if (run < RUNS - 1) await tab.close();
    }
    const warm = timings.slice(1).map((t) => t.ms);
    console.log(
      `Portfolio of ${APPLICATIONS} applications, all rows painted (ms from navigation): cold ${timings[0]!.ms.toFixed(0)}, warm p50 ${percentile(warm, 50).toFixed(0)} / max ${Math.max(...warm).toFixed(0)} (${warm.length} runs); budget 1500 ms: ${Math.max(...timings.map((t) => t.ms)) < 1500 ? "within" : "OVER"}`,
    );
    console.log("| run | scripts loaded | portfolio query sent | query took | rows painted |");
    console.log("|---|---:|---:|---:|---:|");
    for (const t of timings)
      console.log(
        `| ${t.run === 0 ? "cold" : `warm ${t.run}`} | ${t.scriptsMs.toFixed(0)} | ${t.queryStartMs.toFixed(0)} | ${t.queryMs.toFixed(0)} | ${t.ms.toFixed(0)} |`,
      );

    // Live status paint, with the portfolio (the last tab) open, against a bare graphql-ws client.
    const tab = portfolio.pages().at(-1)!;
    await tab.evaluate(() => {
      const w = window as unknown as { painted: { name: string; status: string; at: number }[] };
      w.painted = [];
      const last = new Map<string, string>();
      new MutationObserver(() => {
        for (const row of document.querySelectorAll("table tbody tr")) {
          const name = row.querySelector("th")?.textContent ?? "";
          const scans = row.querySelector("td:last-child")?.textContent ?? "";
          if (last.get(name) !== scans) {
            last.set(name, scans);
            const status = /dast\s*(running|completed|failed)/.exec(scans)?.[1];
            if (status) w.painted.push({ name, status, at: Date.now() });
          }
        }
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    const bare: { id: string; status: string; at: number }[] = [];
    const ws = createClient({
      url: base.replace("http", "ws") + "/graphql",
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${token}` },
    });
    const stopBare = ws.subscribe<{ scanUpdated: { id: string; status: string } }>(
      { query: "subscription { scanUpdated { id status } }" },
      {
        next: ({ data }) =>
          bare.push({ id: data!.scanUpdated.id, status: data!.scanUpdated.status.toLowerCase(), at: Date.now() }),
        error: () => {},
        complete: () => {},
      },
    );
    await new Promise((r) => setTimeout(r, 500)); // the bare client's subscription is in place
    const page500 = ids.slice(-LIVE_SCANS); // shown on the first page (newest first)
    const names = new Map<string, string>();
    const triggered: { appId: string; scanId: string }[] = [];
    for (const appId of page500) {
      names.set(appId, (await api("GET", `/applications/${appId}`)).name);
      triggered.push({ appId, scanId: (await api("POST", `/applications/${appId}/scans`, { scanType: "dast" })).id });
      await new Promise((r) => setTimeout(r, 300)); // one at a time, as a person would see them
    }
    await tab.waitForFunction(
      (n) =>
        (window as unknown as { painted: { status: string }[] }).painted.filter((p) => p.status !== "running").length >=
        n,
      LIVE_SCANS,
      { timeout: 60_000 },
    );
    const painted = await tab.evaluate(
      () => (window as unknown as { painted: { name: string; status: string; at: number }[] }).painted,
    );
    stopBare();
    await ws.dispose();
    const pageLag: number[] = [];
    const bareLag: number[] = [];
    for (const { appId, scanId } of triggered) {
      const scan = await api("GET", `/applications/${appId}/scans/${scanId}`);
      for (const [status, committed] of [
        ["running", scan.startedAt],
        ["completed", scan.completedAt],
      ] as const) {
        const at = painted.find((p) => p.name === names.get(appId) && p.status === status)?.at;
        const heard = bare.find((b) => b.id === scanId && b.status === status)?.at;
        if (at !== undefined) pageLag.push(at - Date.parse(committed));
        if (heard !== undefined) bareLag.push(heard - Date.parse(committed));
      }
    }
    console.log(
      `Live status, commit → painted in the portfolio of ${APPLICATIONS} (${pageLag.length} changes): p50 ${percentile(pageLag, 50)} ms, max ${Math.max(...pageLag)} ms; commit → a bare graphql-ws client: p50 ${percentile(bareLag, 50)} ms, max ${Math.max(...bareLag)} ms; budget 1000 ms: ${Math.max(...pageLag) < 1000 ? "within" : "OVER"}`,
    );
    await portfolio.close();

    // Signed in at the provider: its redirect back → every portfolio row painted.
    const signIns: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const fresh = await browser.newContext();
      const tab = await fresh.newPage();
      await tab.addInitScript(observeRows, APPLICATIONS);
      await tab.goto(`${base}/`);
      await tab.getByRole("button", { name: /^Sign in with/ }).click();
      await tab.locator('input[name="login"]').fill(`bench-${run}`);
      await tab.locator('input[name="password"]').fill("bench");
      await tab.getByRole("button", { name: "Sign-in" }).click();
      await tab.getByRole("button", { name: "Continue" }).click();
      await tab.waitForFunction(
        () => (window as unknown as { rowsPaintedAt?: number }).rowsPaintedAt !== undefined,
        null,
        { timeout: 30_000 },
      );
      // performance.now() counts from this document's navigation: the provider's redirect to the callback.
      signIns.push(await tab.evaluate(() => (window as unknown as { rowsPaintedAt: number }).rowsPaintedAt));
      await fresh.close();
    }
    console.log(
      `Sign-in, the provider's redirect back → all ${APPLICATIONS} portfolio rows painted (ms, fresh browser each run): ${signIns.map((ms) => ms.toFixed(0)).join(", ")}; median ${percentile(signIns, 50).toFixed(0)}; budget 1500 ms: ${percentile(signIns, 50) < 1500 ? "within" : "OVER"}`,
    );
  } finally {
    await provider.close();
    await browser.close();
    service.child.kill("SIGTERM");
    await service.exited;
    await database.stop();
  }
}
