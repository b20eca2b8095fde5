// REST and GraphQL load: the real service (`src/main.ts`, its own process) on a fresh database,
// loaded over loopback with autocannon from this process. Prints requests/s, latency percentiles
// and the server's resident memory per scenario.
import { randomBytes } from "node:crypto";
import os from "node:os";
import { spawn } from "node:child_process";
import autocannon from "autocannon";
import { mintToken } from "../src/auth/mint-token.ts";
import { benchDatabase } from "./database.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const SECRET = "bench-secret-bench-secret-bench-secret-00";

const PORT = Number(process.env.BENCH_PORT ?? 18181);

const DASHBOARD_QUERY = `{
  applications(first: 20) {
    totalCount
    edges { node {
      name criticality
      vulnerabilityCounts { total unresolvedBySeverity { critical high medium low } }
      latestScans { scanType status summary { totalFindings } }
      vulnerabilities(first: 10) { totalCount edges { node { title severity cvssScore } } }
    } }
  }
}`;

async function serverRss(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Math.round(Number(/^process_resident_memory_bytes (\d+)/m.exec(text)?.[1] ?? 0) / 2 ** 20);
}

export async function runRestBench(): Promise<void> {
  const db = await benchDatabase();
  const server = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    env: { ...process.env, DATABASE_URL: db.url, PORT: String(PORT), HOST: "127.0.0.1", NODE_ENV: "production", AUTH_JWT_SECRET: SECRET, WEBHOOK_SECRET_KEYS: randomBytes(32).toString("base64"), LOG_LEVEL: "silent", RATE_LIMIT_PER_MINUTE: "100000000", SCAN_DURATION_MS: "20" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const base = `http://127.0.0.1:${PORT}`;
  for (let i = 0; ; i++) {
    if (await fetch(`${base}/readyz`).then((r) => r.ok, () => false)) break;
    if (i > 300) throw new Error("the service did not become ready");
    await new Promise((r) => setTimeout(r, 100));
  }
  const headers = { authorization: `Bearer ${await mintToken({ secret: SECRET, sub: "bench", scopes: ["admin"] })}`, "content-type": "application/json" };

  const ids: string[] = [];
  for (let i = 0; i < 500; i++) {
    const res = await fetch(`${base}/applications`, {
      method: "POST",
      headers,
      body: JSON.stringify({ name: `seed-${i}`, owner: `team-${i % 10}`, criticality: ["low", "medium", "high", "critical"][i % 4], tags: [`t${i % 7}`] }),
    });
    ids.push(((await res.json()) as { id: string }).id);
  }
  // The newest applications get scanned, so the dashboard has vulnerabilities and scans to show.
  const scanned = ids.slice(-40);
  for (const id of scanned) {
    for (const scanType of ["sast", "sca"]) {
      await fetch(`${base}/applications/${id}/scans`, { method: "POST", headers, body: JSON.stringify({ scanType }) });
    }
  }
  for (const id of scanned) {
    for (let i = 0; ; i++) {
      const scans = (await (await fetch(`${base}/applications/${id}/scans`, { headers })).json()) as { status: string }[];
      if (scans.every((s) => s.status === "completed")) break;
      if (i > 600) throw new Error("seed scans did not complete");
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  let created = 0;
  const scenarios: { name: string; opts: autocannon.Options }[] = [
    { name: "GET /applications/{id}", opts: { url: `${base}/applications/${ids[250]}` } },
    { name: "GET /applications?limit=50", opts: { url: `${base}/applications?limit=50` } },
    { name: "GET /applications?owner&criticality&tag", opts: { url: `${base}/applications?owner=team-3&criticality=high&tag=t1` } },
    {
      name: "POST /applications",
      opts: {
        url: `${base}/applications`,
        method: "POST",
        requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ name: `bench-${created++}-${Math.random()}` }) }) }],
      },
    },
    {
      name: "POST /graphql dashboard (20 apps, counts, latest scans, 10 vulns each)",
      opts: { url: `${base}/graphql`, method: "POST", body: JSON.stringify({ query: DASHBOARD_QUERY }) },
    },
    { name: "GET /healthz (framework floor)", opts: { url: `${base}/healthz` } },
  ];

  console.log(`node ${process.version}, ${os.cpus().length} CPUs, ${CONNECTIONS} connections, ${SECONDS}s per scenario, database ${process.env.DATABASE_URL ? "DATABASE_URL" : "embedded"}`);
  console.log("| scenario | req/s | p50 ms | p99 ms | non-2xx | RSS MiB |");
  console.log("|---|---:|---:|---:|---:|---:|");
  for (const s of scenarios) {
    const result = await autocannon({ connections: CONNECTIONS, duration: SECONDS, headers, ...s.opts });
    const rss = await serverRss(base);
    console.log(`| ${s.name} | ${Math.round(result.requests.average)} | ${result.latency.p50} | ${result.latency.p99} | ${result.non2xx} | ${rss} |`);
  }

  server.kill("SIGTERM");
  await new Promise((resolve) => server.once("exit", resolve));
  await db.stop();
}

