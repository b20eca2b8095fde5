// The baseline DAST engine through the real service (`dist/main.js`, its own process,
// SCAN_ENGINES=dast:baseline) on a fresh database, scanning a local site of 100 HTML pages served
// from this process. Prints how long a scan takes alone, then the service's REST latency
// (GET /applications/{id} at a steady rate, autocannon) idle and while scans run back to back, in
// the same run, and how much the service's resident memory grows during those scans (sampled from
// /proc every 20 ms), with the service's CPU time per scan. BENCH_CPU_PROF_DIR=dir writes the
// service's CPU profile there;
// BENCH_DAST_RATE sets the request rate (400/s), BENCH_SECONDS each phase's length (8 s).
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import autocannon from "autocannon";
import { mintToken } from "../src/auth/mint-token.ts";
import { startServiceProcess } from "../test/helpers/service-process.ts";
import { cpuSeconds } from "./cpu-time.ts";
import { benchDatabase } from "./database.ts";
import { memoryOf } from "./process-memory.ts";
import { extraServiceFlags } from "./service-flags.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const RATE = Number(process.env.BENCH_DAST_RATE ?? 400);
const SECRET = "bench-secret-bench-secret-bench-secret-00";
const PAGES = 100;

/**
 * A site as a small CMS renders it: 100 pages of about 8 KiB, each linking to the next ones and a few
 * others, a stylesheet, a script, a search form and a POST form without an anti-CSRF token; it sends
 * no CSP, no anti-clickjacking header and a version banner, so every page has findings to record.
 */
function startSite(): Promise<{ url: string; requests: () => number; close: () => void }> {
  let requests = 0;
  const text = "<p>" + "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(20) + "</p>";
  const page = (n: number) => {
    const links = [2 * n + 1, 2 * n + 2, (n * 7) % PAGES, (n * 13) % PAGES]
      .filter((m) => m > 0 && m < PAGES)
      .map((m) => `<li><a href="/page/${m}">Page ${m}</a></li>`);
    return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Page ${n}</title><link rel="stylesheet" href="/site.css"><script src="/site.js" defer></script></head>
<body><header><nav><a href="/">Home</a><form action="/search"><input name="q"></form></nav></header><main><h1>Page ${n}</h1>${text.repeat(6)}<ul>${links.join("")}</ul>
<form method="post" action="/comments"><textarea name="comment"></textarea><button>Send</button></form></main></body></html>`;
  };
  const server = http.createServer((req, res) => {
    requests++;
    const n = req.url === "/" ? 0 : Number(/^\/page\/(\d+)$/.exec(req.url ?? "")?.[1] ?? NaN);
    const headers = { server: "Apache/2.4.62 (Debian)", "x-content-type-options": "nosniff" };
    if (n >= 0 && n < PAGES)
      return res.writeHead(200, { ...headers, "content-type": "text/html; charset=utf-8" }).end(page(n));
    if (req.url === "/site.css")
      return res.writeHead(200, { ...headers, "content-type": "text/css" }).end("body{margin:0 auto;max-width:60em}");
    if (req.url === "/site.js")
      return res
        .writeHead(200, { ...headers, "content-type": "text/javascript" })
        .end("document.body.dataset.ready='1';");
    res.writeHead(404, { ...headers, "content-type": "text/plain" }).end("not found");
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
        requests: () => requests,
        close: () => server.close(),
      }),
    ),
  );
}

interface Scan {
  id: string;
  status: string;
  startedAt: string | null;
  completedAt: string | null;
  summary: { totalFindings: number } | null;
}

export async function runBaselineScanBench(): Promise<void> {
  const database = await benchDatabase();
  const site = await startSite();
  const nodeArgs = [
    ...extraServiceFlags(),
    ...(process.env.BENCH_CPU_PROF_DIR ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`] : []),
  ];
  const service = await startServiceProcess({
    env: {
      DATABASE_URL: database.url,
      NODE_ENV: "production",
      AUTH_JWT_SECRET: SECRET,
      WEBHOOK_SECRET_KEYS: randomBytes(32).toString("base64"),
      LOG_LEVEL: "warn",
      RATE_LIMIT_PER_MINUTE: "100000000",
      SCAN_ENGINES: "dast:baseline",
      SCAN_ALLOW_PRIVATE_TARGETS: "true",
      DAST_MAX_PAGES: "200", // the whole site: its 100 pages, the stylesheet, the script, robots.txt, sitemap.xml
    },
    nodeArgs,
  });
  const pid = service.child.pid!;
  const base = service.baseUrl;
  const headers = {
    authorization: `Bearer ${await mintToken({ secret: SECRET, sub: "bench", scopes: ["admin"] })}`,
    "content-type": "application/json",
  };
  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(base + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };

  /** Triggers a dast scan and waits for it; its time from trigger to completion, as this client sees it. */
  const scanOnce = async (appId: string): Promise<{ ms: number; scan: Scan }> => {
    const start = performance.now();
    const queued = await api<Scan>("POST", `/applications/${appId}/scans`, { scanType: "dast" });
    for (;;) {
      const scan = await api<Scan>("GET", `/applications/${appId}/scans/${queued.id}`);
      if (scan.status === "completed") return { ms: performance.now() - start, scan };
      if (scan.status === "failed") throw new Error(`the scan failed: ${JSON.stringify(scan)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const load = (path: string) =>
    autocannon({ url: base + path, headers, connections: 10, overallRate: RATE, duration: SECONDS });
  const ms = (value: number) => `${value.toFixed(0)} ms`;

  try {
    const app = await api<{ id: string }>("POST", "/applications", { name: "bench-dast", serviceUrl: site.url });
    const before = site.requests();
    const cpuBefore = cpuSeconds([pid]);
    const alone = await scanOnce(app.id);
    const cpuCold = cpuSeconds([pid]) - cpuBefore;
    const requestsPerScan = site.requests() - before;
    console.log(
      `site: ${PAGES} HTML pages of ${(Buffer.byteLength(await (await fetch(site.url + "page/1")).text()) / 1024).toFixed(1)} KiB; ` +
        `one scan: ${requestsPerScan} requests, ${alone.scan.summary?.totalFindings} findings`,
    );
    console.log(
      `a scan alone (the first, cold): ${ms(alone.ms)} from trigger to completed (running ${ms(Date.parse(alone.scan.completedAt!) - Date.parse(alone.scan.startedAt!))}), ` +
        `service CPU ${ms(cpuCold * 1000)}`,
    );
    const cpuWarm = cpuSeconds([pid]);
    const warm = await scanOnce(app.id);
    console.log(
      `a scan alone (warm, every finding seen again): ${ms(warm.ms)}, service CPU ${ms((cpuSeconds([pid]) - cpuWarm) * 1000)}`,
    );

    const idle = await load(`/applications/${app.id}`);
    const rssBefore = (await memoryOf(pid)).now;

    let scanning = true;
    let peakRss = rssBefore;
    const sampler = (async () => {
      while (scanning) {
        peakRss = Math.max(peakRss, (await memoryOf(pid)).now);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const durations: number[] = [];
    const scans = (async () => {
      while (scanning) durations.push((await scanOnce(app.id)).ms);
    })();
    const during = await load(`/applications/${app.id}`);
    scanning = false;
    await Promise.all([scans, sampler]);

    durations.sort((a, b) => a - b);
    console.log(`\nGET /applications/{id} at ${RATE} requests/s for ${SECONDS} s, 10 connections:`);
    console.log(`| | requests | p50 ms | p99 ms | max ms | non-2xx |`);
    console.log(`|---|---:|---:|---:|---:|---:|`);
    for (const [name, result] of [
      ["idle", idle],
      ["during back-to-back scans", during],
    ] as const) {
      console.log(
        `| ${name} | ${result.requests.total} | ${result.latency.p50} | ${result.latency.p99} | ${result.latency.max} | ${result.non2xx} |`,
      );
    }
    console.log(`p99 during / idle: ${(during.latency.p99 / idle.latency.p99).toFixed(2)}×`);
    console.log(
      `scans during the load: ${durations.length}, median ${ms(durations[Math.floor(durations.length / 2)] ?? NaN)}, slowest ${ms(durations.at(-1) ?? NaN)}`,
    );
    console.log(
      `service RSS: ${rssBefore} MiB before the scans, at most ${peakRss} MiB during them: +${peakRss - rssBefore} MiB`,
    );
  } finally {
    service.child.kill("SIGTERM");
    await service.exited;
    site.close();
    await database.stop();
  }
}
