// Behind a transaction pooler (docs/operators/pooler.md): the compiled service with DATABASE_URL
// through Debian's PgBouncer (transaction mode, 20 server connections per database) against the
// same service with DATABASE_URL straight to Postgres, in one run, alternated, five times each.
//   REST reads: direct (named statements), direct with unnamed statements (DATABASE_POOL_MODE=
//     transaction without a pooler: what the statements cost apart from the pooler's hop), and
//     through PgBouncer; requests/s, ratio to direct.
//   Webhook burst: 10,000 events in one transaction to one subscription, drained by one instance
//     direct, one instance through PgBouncer, and four instances through PgBouncer's 20 server
//     connections; deliveries/s from the commit to the last arrival, ratio to direct.
//   BENCH_SECONDS=5 (each REST run), BENCH_WEBHOOK_BURST=10000, BENCH_POOLER_RUNS=5,
//   BENCH_POOLER_READS="GET /applications/{id}" (that read alone; "none": no reads), BENCH_POOLER_BURSTS=0 (no bursts)
import { randomBytes } from "node:crypto";
import autocannon from "autocannon";
import { mintToken } from "../src/auth/mint-token.ts";
import { openDatabase, type Database } from "../src/db/client.ts";
import { recordEvents } from "../src/events/outbox.ts";
import { startPgBouncer, type PgBouncer } from "../test/helpers/pgbouncer.ts";
import { createSelfSignedCert } from "../test/helpers/self-signed-cert.ts";
import { cyclonedxReport } from "../test/helpers/vex-documents.ts";
import { startServiceProcess, type ServiceProcess } from "../test/helpers/service-process.ts";
import { cpuSeconds } from "./cpu-time.ts";
import { findingEvent } from "./sample-finding-event.ts";
import { benchDatabase, siblingDatabase } from "./database.ts";
import { extraServiceFlags } from "./service-flags.ts";
import { startReceiver, type Arrival, type Receiver } from "./webhook-peers.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 32;
const BURST = Number(process.env.BENCH_WEBHOOK_BURST ?? 10_000);
const RUNS = Number(process.env.BENCH_POOLER_RUNS ?? 5);
const SERVER_CONNECTIONS = 20;
const SECRET = "bench-secret-bench-secret-bench-secret-00";
const WAIT_LIMIT_MS = 180_000;

/** CPU seconds so far of the instances, of Postgres and of PgBouncer (cpu-time.ts). */
const burstCpu = (instances: ServiceProcess[]) => ({
  service: cpuSeconds(instances.map((s) => s.child.pid!)),
  postgres: cpuSeconds([], "postgres"),
  pgbouncer: cpuSeconds([], "pgbouncer"),
});

/** CPU seconds so far of the service, of Postgres and of PgBouncer (cpu-time.ts). */
const cpuNow = (service: ServiceProcess) => ({
  service: cpuSeconds([service.child.pid!]),
  postgres: cpuSeconds([], "postgres"),
  pgbouncer: cpuSeconds([], "pgbouncer"),
});

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const pct = (ratio: number) => `${Math.round(ratio * 100)} %`;

interface Variant {
  name: string;
  /** The service's database settings. */
  env: (directUrl: string) => Record<string, string>;
}

export async function runPoolerBench(): Promise<void> {
  const primary = await benchDatabase();
  const second = await siblingDatabase(primary.url, "b");
  const third = await siblingDatabase(primary.url, "c");
  const bouncer = await startPgBouncer(primary.url, { poolSize: SERVER_CONNECTIONS });
  const cert = createSelfSignedCert();
  const receiver = await startReceiver(cert, 0);
  const token = await mintToken({ secret: SECRET, sub: "bench", scopes: ["admin"] });
  const services: ServiceProcess[] = [];
  const webhookSecretKeys = randomBytes(32).toString("base64"); // one for all: instances open each other's sealed secrets
  const start = async (env: Record<string, string>) => {
    const service = await startServiceProcess({
      env: {
        NODE_ENV: "production",
        AUTH_JWT_SECRET: SECRET,
        WEBHOOK_SECRET_KEYS: webhookSecretKeys,
        LOG_LEVEL: "warn",
        RATE_LIMIT_PER_MINUTE: "100000000",
        WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
        NODE_EXTRA_CA_CERTS: cert.certPath,
        ...env,
      },
      nodeArgs: extraServiceFlags(),
    });
    services.push(service);
    return service;
  };
  const direct: Variant = { name: "direct", env: (url) => ({ DATABASE_URL: url }) };
  const unnamed: Variant = {
    name: "direct, unnamed statements",
    env: (url) => ({ DATABASE_URL: url, DATABASE_DIRECT_URL: url, DATABASE_POOL_MODE: "transaction" }),
  };
  const pooled: Variant = {
    name: "through PgBouncer",
    env: (url) => ({ DATABASE_URL: bouncer.pooled(url), DATABASE_DIRECT_URL: url }),
  };
  console.log(
    `${(await bouncer.admin<{ version: string }>("SHOW VERSION"))[0]!.version}, pool_mode = transaction, ` +
      `default_pool_size = ${SERVER_CONNECTIONS}; ${RUNS} alternated runs of each\n`,
  );
  try {
    if (process.env.BENCH_POOLER_READS !== "none")
      await restReads(
        [direct, unnamed, pooled].map((v) => ({ v, url: primary.url })),
        start,
        token,
      );
    if (process.env.BENCH_POOLER_BURSTS === "0") return;
    // Each burst's own database, so that only its instances drain it.
    const bursts = [
      {
        name: "1 instance direct",
        database: openDatabase(primary.url),
        instances: [await start(direct.env(primary.url))],
      },
      {
        name: "1 instance through PgBouncer",
        database: openDatabase(second.url),
        instances: [await start(pooled.env(second.url))],
      },
      {
        name: `4 instances through PgBouncer (${SERVER_CONNECTIONS} server connections)`,
        database: openDatabase(third.url),
        instances: await Promise.all([1, 2, 3, 4].map(() => start(pooled.env(third.url)))),
      },
    ];
    await webhookBursts(bursts, receiver, token, bouncer);
    for (const b of bursts) await b.database.close();
  } finally {
    for (const s of services) s.child.kill("SIGTERM");
    await Promise.all(services.map((s) => s.exited));
    receiver.close();
    cert.remove();
    await bouncer.stop();
    await third.stop();
    await second.stop();
    await primary.stop();
  }
}

/** 500 applications, and 40 of them with vulnerabilities, through the first service. */
async function seed(base: string, headers: Record<string, string>): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < 500; i++) {
    const res = await fetch(`${base}/applications`, {
      method: "POST",
      headers,
      body: JSON.stringify({ name: `seed-${i}`, owner: `team-${i % 10}`, criticality: "high", tags: [`t${i % 7}`] }),
    });
    ids.push(((await res.json()) as { id: string }).id);
  }
  const report = cyclonedxReport(
    Array.from({ length: 20 }, (_, n) => ({
      id: `CVE-2099-${1000 + n}`,
      purl: `pkg:npm/package-${n}@1.0.0`,
      severity: "high" as const,
    })),
  );
  for (const id of ids.slice(-40)) {
    const res = await fetch(`${base}/applications/${id}/scan-reports`, {
      method: "POST",
      headers,
      body: JSON.stringify(report),
    });
    if (res.status !== 202) throw new Error(`seeding a report: ${res.status} ${await res.text()}`);
  }
  return ids;
}

async function restReads(
  variants: { v: Variant; url: string }[],
  start: (env: Record<string, string>) => Promise<ServiceProcess>,
  token: string,
): Promise<void> {
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const running: { v: Variant; service: ServiceProcess }[] = [];
  for (const { v, url } of variants) running.push({ v, service: await start(v.env(url)) });
  const ids = await seed(running[0]!.service.baseUrl, headers);
  const scanned = ids.at(-1)!;
  const reads = [
    { name: "GET /applications/{id}", path: `/applications/${ids[250]}` },
    { name: "GET /applications?limit=100", path: "/applications?limit=100" },
    { name: "GET /applications/{id}/vulnerabilities", path: `/applications/${scanned}/vulnerabilities` },
    {
      name: "POST /graphql application(id)",
      path: "/graphql",
      method: "POST" as const,
      body: JSON.stringify({ query: `{ application(id: "${scanned}") { name vulnerabilityCounts { total } } }` }),
    },
  ];
  const only = process.env.BENCH_POOLER_READS; // e.g. "GET /applications/{id}", to profile one read alone
  if (only) reads.splice(0, reads.length, ...reads.filter((r) => r.name === only));
  console.log(`REST reads, ${CONNECTIONS} connections, ${SECONDS} s a run (requests/s):\n`);
  console.log(
    `| read | ${running.map((r) => `${r.v.name}, ${RUNS} runs`).join(" | ")} | medians' ratios to direct | CPU ms per request: service, Postgres, PgBouncer |`,
  );
  console.log(`|---|${running.map(() => "---|").join("")}---|---|`);
  for (const read of reads) {
    const rates = running.map(() => [] as number[]);
    const cpu = running.map(() => ({ service: 0, postgres: 0, pgbouncer: 0, requests: 0 }));
    for (let run = 0; run < RUNS; run++) {
      for (const [i, r] of running.entries()) {
        const before = cpuNow(r.service);
        const result = await autocannon({
          url: r.service.baseUrl + read.path,
          method: read.method ?? "GET",
          ...(read.body !== undefined && { body: read.body }),
          headers,
          connections: CONNECTIONS,
          duration: SECONDS,
        });
        if (result.non2xx || result.errors) throw new Error(`${read.name} (${r.v.name}): ${result.non2xx} non-2xx`);
        rates[i]!.push(Math.round(result.requests.average));
        const after = cpuNow(r.service);
        const c = cpu[i]!;
        c.service += after.service - before.service;
        c.postgres += after.postgres - before.postgres;
        c.pgbouncer += after.pgbouncer - before.pgbouncer;
        c.requests += result.requests.total;
      }
    }
    const medians = rates.map(median);
    const ratios = medians.slice(1).map((m, i) => `${running[i + 1]!.v.name} ${pct(m / medians[0]!)}`);
    const perRequest = (seconds: number, requests: number) => ((seconds * 1000) / requests).toFixed(3);
    const cpus = cpu.map(
      (c, i) =>
        `${running[i]!.v.name}: ${perRequest(c.service, c.requests)}, ${perRequest(c.postgres, c.requests)}, ${perRequest(c.pgbouncer, c.requests)}`,
    );
    console.log(
      `| ${read.name} | ${rates.map((r, i) => `${r.join(", ")} (median ${medians[i]})`).join(" | ")} | ${ratios.join("; ")} | ${cpus.join("; ")} |`,
    );
  }
  for (const r of running) {
    r.service.child.kill("SIGTERM");
    await r.service.exited;
  }
}

/** The most server connections PgBouncer had in use (active or used) and clients waiting, while `during` ran. */
async function poolsWhile<T>(
  bouncer: PgBouncer,
  during: Promise<T>,
): Promise<{ result: T; servers: number; waiting: number }> {
  let servers = 0;
  let waiting = 0;
  let done = false;
  const sampling = (async () => {
    while (!done) {
      for (const p of await bouncer.admin<{ sv_active: string; sv_used: string; cl_waiting: string }>("SHOW POOLS")) {
        servers = Math.max(servers, Number(p.sv_active) + Number(p.sv_used));
        waiting = Math.max(waiting, Number(p.cl_waiting));
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const result = await during.finally(() => (done = true));
  await sampling;
  return { result, servers, waiting };
}

async function webhookBursts(
  bursts: { name: string; database: Database; instances: ServiceProcess[] }[],
  receiver: Receiver,
  token: string,
  bouncer: PgBouncer,
): Promise<void> {
  for (const [i, b] of bursts.entries()) {
    const res = await fetch(`${b.instances[0]!.baseUrl}/webhooks`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({
        name: "burst",
        url: `https://127.0.0.1:${receiver.port}/burst-${i}`,
        events: ["vulnerability.created"],
        secret: "bench-burst-secret",
      }),
    });
    if (res.status !== 201) throw new Error(`webhook: ${res.status}`);
  }
  const burst = async (b: (typeof bursts)[number], path: string, count: number) => {
    await receiver.take();
    await b.database.prisma.$transaction(
      (tx) =>
        recordEvents(
          tx,
          Array.from({ length: count }, (_, n) => findingEvent(n)),
        ),
      { timeout: 60_000 },
    );
    const committed = Date.now();
    let arrivals: Arrival[] = [];
    for (const deadline = Date.now() + WAIT_LIMIT_MS; arrivals.length < count;) {
      if (Date.now() > deadline) throw new Error(`${b.name}: ${arrivals.length} of ${count} deliveries`);
      await new Promise((r) => setTimeout(r, 20));
      arrivals = arrivals.concat((await receiver.take()).filter((a) => a.path === path));
    }
    if (new Set(arrivals.map((a) => a.deliveryId)).size !== count) throw new Error(`${b.name}: repeated deliveries`);
    return count / ((Math.max(...arrivals.map((a) => a.at)) - committed) / 1000);
  };
  // Warm: every instance's statements and connections, as on a service that has been running.
  for (const [i, b] of bursts.entries()) await burst(b, `/burst-${i}`, 500 * b.instances.length);
  const rates = bursts.map(() => [] as number[]);
  const cpu = bursts.map(() => ({ service: 0, postgres: 0, pgbouncer: 0 }));
  const pools = bursts.map(() => ({ servers: 0, waiting: 0 }));
  for (let run = 0; run < RUNS; run++)
    for (const [i, b] of bursts.entries()) {
      const before = burstCpu(b.instances);
      const sampled = await poolsWhile(bouncer, burst(b, `/burst-${i}`, BURST));
      const after = burstCpu(b.instances);
      rates[i]!.push(Math.round(sampled.result));
      for (const k of ["service", "postgres", "pgbouncer"] as const) cpu[i]![k] += after[k] - before[k];
      pools[i]!.servers = Math.max(pools[i]!.servers, sampled.servers);
      pools[i]!.waiting = Math.max(pools[i]!.waiting, sampled.waiting);
    }
  const medians = rates.map(median);
  const perDelivery = (seconds: number) => ((seconds * 1000) / (RUNS * BURST)).toFixed(3);
  console.log(
    `\nWebhook burst: ${BURST} events in one transaction → 1 subscription (deliveries/s, commit to last arrival):\n`,
  );
  console.log(
    `| drained by | ${RUNS} runs | median | ratio to 1 instance direct | CPU ms per delivery: service, Postgres, PgBouncer | PgBouncer: most server connections in use, clients waiting |`,
  );
  console.log("|---|---|---:|---:|---|---|");
  for (const [i, b] of bursts.entries()) {
    const c = cpu[i]!;
    const p = i === 0 ? "(direct)" : `${pools[i]!.servers}, ${pools[i]!.waiting}`;
    console.log(
      `| ${b.name} | ${rates[i]!.join(", ")} | ${medians[i]} | ${pct(medians[i]! / medians[0]!)} | ${perDelivery(c.service)}, ${perDelivery(c.postgres)}, ${perDelivery(c.pgbouncer)} | ${p} |`,
    );
  }
}
