// REST and GraphQL load: the real service (`dist/main.js` as `npm start` runs it, its own process;
// `npm run bench` builds it first) on a fresh database,
// loaded over loopback with autocannon from this process. Prints requests/s, latency percentiles
// and the server's resident memory per scenario. BENCH_CPU_PROF_DIR=dir writes the service's CPU
// profile there; BENCH_REST_SCENARIOS=reads runs only the side-by-side reads, =dashboard only the
// dashboard's pair (to profile it alone).
import { randomBytes } from "node:crypto";
import os from "node:os";
import { isDeepStrictEqual } from "node:util";
import { spawn } from "node:child_process";
import autocannon from "autocannon";
import { mintToken } from "../src/auth/mint-token.ts";
import { cpuSeconds } from "./cpu-time.ts";
import { benchDatabase } from "./database.ts";
import { serviceFlags } from "./service-flags.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SECRET = "bench-secret-bench-secret-bench-secret-00";

/** The dashboard was measured at 16 connections when issue 9 was written. */
const DASHBOARD_CONNECTIONS = Number(process.env.BENCH_DASHBOARD_CONNECTIONS ?? 16);

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

/** The service's resident memory and, to tell where it is, V8's heap, both in MiB (its /metrics). */
async function serverMemory(base: string): Promise<string> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const mib = (metric: string) =>
    Math.round(Number(new RegExp(`^${metric} (\\d+)`, "m").exec(text)?.[1] ?? 0) / 2 ** 20);
  return `${mib("process_resident_memory_bytes")} (heap ${mib("nodejs_heap_size_used_bytes")} of ${mib("nodejs_heap_size_total_bytes")})`;
}

export async function runRestBench(): Promise<void> {
  const db = await benchDatabase();
  const profile = process.env.BENCH_CPU_PROF_DIR
    ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`]
    : [];
  const server = spawn(process.execPath, [...profile, ...serviceFlags(), "dist/main.js"], {
    env: {
      ...process.env,
      DATABASE_URL: db.url,
      PORT: String(PORT),
      HOST: "127.0.0.1",
      NODE_ENV: "production",
      AUTH_JWT_SECRET: SECRET,
      WEBHOOK_SECRET_KEYS: randomBytes(32).toString("base64"),
      LOG_LEVEL: "silent",
      RATE_LIMIT_PER_MINUTE: "100000000",
      SCAN_DURATION_MS: "20",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const base = `http://127.0.0.1:${PORT}`;
  for (let i = 0; ; i++) {
    if (
      await fetch(`${base}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (i > 300) throw new Error("the service did not become ready");
    await new Promise((r) => setTimeout(r, 100));
  }
  const headers = {
    authorization: `Bearer ${await mintToken({ secret: SECRET, sub: "bench", scopes: ["admin"] })}`,
    "content-type": "application/json",
  };

  const ids: string[] = [];
  for (let i = 0; i < 500; i++) {
    const res = await fetch(`${base}/applications`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        name: `seed-${i}`,
        owner: `team-${i % 10}`,
        criticality: ["low", "medium", "high", "critical"][i % 4],
        tags: [`t${i % 7}`],
      }),
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
      const scans = (await (await fetch(`${base}/applications/${id}/scans`, { headers })).json()) as {
        status: string;
      }[];
      if (scans.every((s) => s.status === "completed")) break;
      if (i > 600) throw new Error("seed scans did not complete");
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  const bare = await startBareServer(db.url);
  let created = 0;
  const scenarios: { name: string; opts: autocannon.Options }[] = [
    {
      name: "GET /applications?owner&criticality&tag",
      opts: { url: `${base}/applications?owner=team-3&criticality=high&tag=t1` },
    },
    {
      name: "POST /applications",
      opts: {
        url: `${base}/applications`,
        method: "POST",
        requests: [
          {
            setupRequest: (req) => ({ ...req, body: JSON.stringify({ name: `bench-${created++}-${Math.random()}` }) }),
          },
        ],
      },
    },
    { name: "GET /healthz (framework floor)", opts: { url: `${base}/healthz` } },
  ];

  console.log(
    `node ${process.version}, ${os.cpus().length} CPUs, ${CONNECTIONS} connections, ${SECONDS}s per scenario, database ${process.env.DATABASE_URL ? "DATABASE_URL" : "embedded"}`,
  );
  const load = (opts: autocannon.Options) =>
    autocannon({ connections: CONNECTIONS, duration: SECONDS, headers, ...opts });
  /** A load, with the CPU time the server process and Postgres spent per request meanwhile. */
  const loadWithCpu = async (pid: number, opts: autocannon.Options) => {
    const before = { server: cpuSeconds([pid]), postgres: cpuSeconds([], "postgres") };
    const result = await load(opts);
    const per = (seconds: number) => ((seconds * 1000) / result.requests.total).toFixed(2);
    return {
      result,
      serverMs: per(cpuSeconds([pid]) - before.server),
      postgresMs: per(cpuSeconds([], "postgres") - before.postgres),
    };
  };

  console.log(`service memory after seeding: ${await serverMemory(base)} MiB`);
  // The reads side by side with the bare server, in alternating order, so both see the same machine.
  const sideBySide = [
    {
      name: "GET /applications/{id}",
      connections: CONNECTIONS,
      ours: { url: `${base}/applications/${ids[250]}` },
      floor: { url: `${bare.base}/applications/${ids[250]}` },
    },
    {
      name: "GET /applications?limit=100",
      connections: CONNECTIONS,
      ours: { url: `${base}/applications?limit=100` },
      floor: { url: `${bare.base}/applications?limit=100` },
    },
    {
      name: "POST /graphql dashboard vs one statement",
      connections: DASHBOARD_CONNECTIONS,
      ours: { url: `${base}/graphql`, method: "POST" as const, body: JSON.stringify({ query: DASHBOARD_QUERY }) },
      floor: { url: `${bare.base}/dashboard`, method: "POST" as const, body: "{}" },
    },
  ];
  await sameDashboard(sideBySide[2]!.ours, sideBySide[2]!.floor, headers);
  if (process.env.BENCH_REST_SCENARIOS === "dashboard") sideBySide.splice(0, 2);
  console.log(
    "| read | connections | service req/s | bare req/s | ratio | service p99 ms | bare p99 ms | p99 ratio | CPU ms per request: service / bare, Postgres for each |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---|");
  for (const read of sideBySide) {
    const ours = await loadWithCpu(server.pid!, { ...read.ours, connections: read.connections });
    const floor = await loadWithCpu(bare.pid, { ...read.floor, connections: read.connections });
    if (ours.result.non2xx || floor.result.non2xx)
      throw new Error(`non-2xx answers on ${read.name}: service ${ours.result.non2xx}, bare ${floor.result.non2xx}`);
    const [rps, bareRps] = [ours.result.requests.average, floor.result.requests.average];
    const [p99, bareP99] = [ours.result.latency.p99, floor.result.latency.p99];
    const cpu = `${ours.serverMs} / ${floor.serverMs}, ${ours.postgresMs} / ${floor.postgresMs}`;
    console.log(
      `| ${read.name} | ${read.connections} | ${Math.round(rps)} | ${Math.round(bareRps)} | ${pct(rps / bareRps)} | ${p99} | ${bareP99} | ${(p99 / bareP99).toFixed(2)}× | ${cpu} |`,
    );
  }
  console.log();

  if (process.env.BENCH_REST_SCENARIOS) scenarios.length = 0;
  console.log(`service memory after the reads: ${await serverMemory(base)} MiB`);
  console.log("| scenario | req/s | p50 ms | p99 ms | non-2xx | RSS MiB (V8 heap) |");
  console.log("|---|---:|---:|---:|---:|---:|");
  for (const s of scenarios) {
    const result = await load(s.opts);
    const rss = await serverMemory(base);
    console.log(
      `| ${s.name} | ${Math.round(result.requests.average)} | ${result.latency.p50} | ${result.latency.p99} | ${result.non2xx} | ${rss} |`,
    );
  }

  // V8 gives back heap it no longer needs once the process has been idle a while (its memory reducer).
  await new Promise((resolve) => setTimeout(resolve, 15_000));
  console.log(`service memory 15 s after the load: ${await serverMemory(base)} MiB`);

  bare.stop();
  server.kill("SIGTERM");
  await new Promise((resolve) => server.once("exit", resolve));
  await db.stop();
}

/** The floor must answer exactly what the service answers, or the comparison means nothing. */
async function sameDashboard(ours: autocannon.Options, floor: autocannon.Options, headers: Record<string, string>) {
  const answer = async (target: autocannon.Options) =>
    (await fetch(target.url, { method: "POST", headers, body: String(target.body) })).json();
  const [a, b] = await Promise.all([answer(ours), answer(floor)]);
  if (!isDeepStrictEqual(a, b))
    throw new Error(
      `the floor's dashboard differs from the service's:\n${JSON.stringify(a).slice(0, 800)}\n${JSON.stringify(b).slice(0, 800)}`,
    );
}

const pct = (ratio: number) => `${Math.round(ratio * 100)} %`;

/** bench/bare-rest-server.ts in its own process on the same database; resolves once it listens. */
async function startBareServer(databaseUrl: string) {
  const port = PORT + 1;
  const child = spawn(process.execPath, ["--import", "tsx", "bench/bare-rest-server.ts"], {
    env: { ...process.env, DATABASE_URL: databaseUrl, AUTH_JWT_SECRET: SECRET, BARE_PORT: String(port) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once("data", () => resolve());
    child.once("exit", (code) => reject(new Error(`the bare server exited (${code})`)));
  });
  return { base: `http://127.0.0.1:${port}`, pid: child.pid!, stop: () => child.kill("SIGTERM") };
}
