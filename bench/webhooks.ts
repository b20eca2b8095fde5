// Webhook delivery benchmark: the real service (src/main.ts, its own process, NODE_ENV=production)
// delivers committed events to a local HTTPS receiver (receiver.ts, its own process), and a bare
// signed sender (bare-sender.ts, its own process, no database) POSTs the same kind of requests to
// the same receiver in the same run: the ratio between the two is the cost of the guarantees.
// Events are committed through the service's own outbox (recordEvents), as a scan commits them.
import { fork, spawn, type ChildProcess } from "node:child_process";
import { mintToken } from "../src/auth/mint-token.ts";
import { openDatabase, type Database } from "../src/db/client.ts";
import { recordEvents, type NewEvent } from "../src/events/outbox.ts";
import { newId } from "../src/ids.ts";
import { createSelfSignedCert, type SelfSignedCert } from "../test/helpers/self-signed-cert.ts";
import { startServiceProcess, type ServiceProcess } from "../test/helpers/service-process.ts";
import { cpuSeconds } from "./cpu-time.ts";
import { benchDatabase } from "./database.ts";

const BURST = Number(process.env.BENCH_WEBHOOK_BURST ?? 10_000);
const STEADY_RATE = 200;
const STEADY_SECONDS = Number(process.env.BENCH_WEBHOOK_STEADY_SECONDS ?? 10);
const FAN_EVENTS = 200; // × 50 subscriptions
const BARE_IN_FLIGHT = 64;
const TIMEOUT_MS = 1000; // attempt timeout of the service under test, so blackholed endpoints time out quickly
const RETRY_INITIAL_MS = 200;
const JWT_SECRET = "bench-secret-bench-secret-bench-secret-00";
const WAIT_LIMIT_MS = 180_000;
/** BENCH_WEBHOOK_SCENARIOS=burst,steady,fan,two runs only those (the bare sender always runs). */
const SCENARIOS = new Set((process.env.BENCH_WEBHOOK_SCENARIOS ?? "burst,steady,fan,two").split(","));

interface Arrival {
  deliveryId: string;
  eventId: string;
  path: string;
  at: number;
}

interface Receiver {
  pid: number;
  port: number;
  take(): Promise<Arrival[]>;
  count(): Promise<number>;
  close(): void;
}

async function startReceiver(cert: SelfSignedCert): Promise<Receiver> {
  const child = fork(new URL("./receiver.ts", import.meta.url).pathname, [], {
    execArgv: ["--import", "tsx"],
    env: { ...process.env, RECEIVER_KEY: cert.key, RECEIVER_CERT: cert.cert },
  });
  const ask = <T>(type: string, answer: string) =>
    new Promise<T>((resolve) => {
      const onMessage = (msg: { type: string } & T) => {
        if (msg.type !== answer) return;
        child.off("message", onMessage);
        resolve(msg);
      };
      child.on("message", onMessage);
      if (type) child.send({ type });
    });
  const { port } = await ask<{ port: number }>("", "listening");
  return {
    pid: child.pid!,
    port,
    take: async () => (await ask<{ arrivals: Arrival[] }>("take", "arrivals")).arrivals,
    count: async () => (await ask<{ count: number }>("count", "count")).count,
    close: () => child.kill(),
  };
}

function bareSender(receiver: Receiver, cert: SelfSignedCert, count: number): Promise<{ perSecond: number; failed: number }> {
  const args = JSON.stringify({ url: `https://127.0.0.1:${receiver.port}/bare`, count, inFlight: BARE_IN_FLIGHT, ca: cert.cert });
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", new URL("./bare-sender.ts", import.meta.url).pathname, args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout!.on("data", (chunk) => (out += String(chunk)));
  return new Promise((resolve, reject) =>
    child.once("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`bare sender exited with ${code}`)))),
  );
}

const percentile = (values: number[], p: number): number => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

// No occurredAt: the outbox stamps each event inside its transaction, the best stand-in for when it happened.
const finding = (n: number): NewEvent => ({
  type: "vulnerability.created",
  data: { id: newId(), severity: "high", applicationId: newId(), title: `Benchmark finding ${n}`, createdAt: new Date().toISOString() },
});

async function waitUntil(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_LIMIT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** First arrival of each event, and how many arrivals repeated a delivery id. */
function firstArrivals(arrivals: Arrival[]): { first: Map<string, number>; repeatedDeliveries: number } {
  const first = new Map<string, number>();
  const deliveries = new Set<string>();
  let repeatedDeliveries = 0;
  for (const a of arrivals) {
    if (deliveries.has(a.deliveryId)) repeatedDeliveries++;
    deliveries.add(a.deliveryId);
    if (!first.has(a.eventId)) first.set(a.eventId, a.at);
  }
  return { first, repeatedDeliveries };
}

interface Row {
  scenario: string;
  deliveries: number;
  perSecond: number;
  baseline?: number;
  p50?: number;
  p99?: number;
  notes: string;
}

export async function runWebhookBench(): Promise<void> {
  const dbHandle = await benchDatabase();
  const cert = createSelfSignedCert();
  const receiver = await startReceiver(cert);
  const env = {
    DATABASE_URL: dbHandle.url,
    NODE_ENV: "production",
    AUTH_JWT_SECRET: JWT_SECRET,
    LOG_LEVEL: "warn",
    RATE_LIMIT_PER_MINUTE: "100000000",
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
    NODE_EXTRA_CA_CERTS: cert.certPath,
    WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    WEBHOOK_RETRY_INITIAL_MS: String(RETRY_INITIAL_MS),
    // The dispatcher's concurrency settings pass through, to compare them.
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => /^WEBHOOK_(CONCURRENCY|ENDPOINT_)/.test(k))),
  } as Record<string, string>;
  // BENCH_CPU_PROF_DIR=dir: each service process writes a CPU profile there when it stops.
  const nodeArgs = process.env.BENCH_CPU_PROF_DIR ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`] : [];
  const services: ServiceProcess[] = [await startServiceProcess({ env, nodeArgs })];
  const db: Database = openDatabase(dbHandle.url);
  const token = await mintToken({ secret: JWT_SECRET, sub: "bench", scopes: ["admin"] });
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${services[0]!.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { id: string };
  };
  let live: string[] = [];
  /** Replaces the live subscriptions with new ones to these paths. */
  async function subscribe(paths: string[]): Promise<string[]> {
    for (const id of live) await api("PUT", `/webhooks/${id}`, { status: "disabled" });
    live = [];
    for (const [i, path] of paths.entries()) {
      live.push((await api("POST", "/webhooks", { name: `bench-${Date.now()}-${i}`, url: `https://127.0.0.1:${receiver.port}${path}`, events: ["vulnerability.created"], secret: `bench-secret-${i}` })).id);
    }
    return live;
  }
  /** CPU seconds so far: the service processes, Postgres (every process of that name), the receiver. */
  const cpu = () => ({
    service: cpuSeconds(services.map((s) => s.child.pid!)),
    postgres: cpuSeconds([], "postgres"),
    receiver: cpuSeconds([receiver.pid]),
  });
  const cpuPerDelivery = (before: ReturnType<typeof cpu>, deliveries: number) => {
    const after = cpu();
    const ms = (k: keyof typeof after) => (((after[k] - before[k]) * 1000) / deliveries).toFixed(2);
    return Number.isNaN(after.service) ? "" : `CPU ms per delivery: service ${ms("service")}, Postgres ${ms("postgres")}, receiver ${ms("receiver")}`;
  };
  const commit = (events: NewEvent[]) => db.prisma.$transaction((tx) => recordEvents(tx, events), { timeout: 60_000 });
  const rows: Row[] = [];

  /**
   * Commits `count` events in one transaction, so that they all become visible at once, and waits
   * until `expected` arrivals satisfy `counted`. Rates and latencies run from the commit.
   */
  async function burst(count: number, counted: (a: Arrival) => boolean, expected: number) {
    await receiver.take();
    const events = Array.from({ length: count }, (_, i) => finding(i));
    const started = Date.now();
    await commit(events);
    const committed = Date.now();
    const cpuBefore = cpu();
    let arrivals: Arrival[] = [];
    await waitUntil(async () => {
      arrivals = arrivals.concat(await receiver.take());
      return arrivals.filter(counted).length >= expected;
    }, `${expected} deliveries`);
    const mine = arrivals.filter(counted);
    const last = Math.max(...mine.map((a) => a.at));
    const { first, repeatedDeliveries } = firstArrivals(mine);
    const latencies = [...first.values()].map((at) => at - committed);
    return { cpu: cpuPerDelivery(cpuBefore, mine.length), committedIn: (committed - started) / 1000, seconds: (last - committed) / 1000, arrivals: mine, latencies, repeatedDeliveries, distinctEvents: first.size };
  }

  const baselineBefore = await bareSender(receiver, cert, BURST);
  await receiver.take();
  rows.push({ scenario: `bare sender (undici, keep-alive, ${BARE_IN_FLIGHT} in flight), before`, deliveries: BURST, perSecond: baselineBefore.perSecond, notes: `${baselineBefore.failed} non-204` });
  const baseline = baselineBefore.perSecond;

  // 1. A burst to one subscription.
  let oneRate = NaN;
  if (SCENARIOS.has("burst")) {
  await subscribe(["/burst"]);
  const one = await burst(BURST, () => true, BURST);
  const retried = await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_deliveries WHERE attempt_count <> 1");
  rows.push({
    scenario: `burst of ${BURST} events (one transaction) → 1 subscription, 1 instance`,
    deliveries: one.arrivals.length,
    perSecond: one.arrivals.length / one.seconds,
    baseline,
    p50: percentile(one.latencies, 50),
    p99: percentile(one.latencies, 99),
    notes: `${one.cpu}; ${one.distinctEvents} distinct events, ${one.repeatedDeliveries} repeated deliveries, ${retried.rows[0]!.n} deliveries not attempted exactly once`,
  });
  oneRate = one.arrivals.length / one.seconds;
  }

  // 2. A steady 200 events/s, each in its own transaction.
  if (SCENARIOS.has("steady")) {
  await subscribe(["/steady"]);
  await receiver.take();
  const steadyIds: string[] = [];
  const pending = new Set<Promise<void>>();
  const total = STEADY_RATE * STEADY_SECONDS;
  const steadyStart = Date.now();
  for (let i = 0; i < total; i++) {
    const wait = steadyStart + (i * 1000) / STEADY_RATE - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const p: Promise<void> = commit([finding(i)]).then(([id]) => void steadyIds.push(id!));
    pending.add(p);
    void p.finally(() => pending.delete(p));
  }
  await Promise.all(pending);
  const committedRate = total / ((Date.now() - steadyStart) / 1000);
  let steadyArrivals: Arrival[] = [];
  await waitUntil(async () => {
    steadyArrivals = steadyArrivals.concat(await receiver.take());
    return steadyArrivals.length >= total;
  }, "the steady events");
  const occurred = await db.pool.query<{ id: string; occurred_at: Date }>("SELECT id, occurred_at FROM events WHERE id = ANY($1::uuid[])", [steadyIds]);
  const occurredAt = new Map(occurred.rows.map((r) => [r.id, r.occurred_at.getTime()]));
  const steadyLatencies = [...firstArrivals(steadyArrivals).first].map(([eventId, at]) => at - occurredAt.get(eventId)!);
  rows.push({
    scenario: `steady ${STEADY_RATE} events/s for ${STEADY_SECONDS} s, one per transaction → 1 subscription`,
    deliveries: steadyArrivals.length,
    perSecond: steadyArrivals.length / STEADY_SECONDS,
    p50: percentile(steadyLatencies, 50),
    p99: percentile(steadyLatencies, 99),
    notes: `events committed at ${committedRate.toFixed(0)}/s`,
  });
  }

  // 3. Fifty subscriptions, all healthy; then 5 of them blackholed (never answered; 1 s timeout).
  if (SCENARIOS.has("fan")) {
  const healthyPaths = Array.from({ length: 50 }, (_, i) => `/fan/${i}`);
  await subscribe(healthyPaths);
  const allHealthy = await burst(FAN_EVENTS, () => true, FAN_EVENTS * 50);
  const allHealthyRate = allHealthy.arrivals.length / allHealthy.seconds;
  rows.push({
    scenario: `${FAN_EVENTS} events → 50 healthy subscriptions`,
    deliveries: allHealthy.arrivals.length,
    perSecond: allHealthyRate,
    baseline,
    p50: percentile(allHealthy.latencies, 50),
    p99: percentile(allHealthy.latencies, 99),
    notes: "",
  });
  const mixed = await subscribe([...healthyPaths.slice(0, 45).map((p) => `${p}b`), ...Array.from({ length: 5 }, (_, i) => `/blackhole/${i}`)]);
  const healthy = (a: Arrival) => !a.path.startsWith("/blackhole/");
  const withBlackholes = await burst(FAN_EVENTS, healthy, FAN_EVENTS * 45);
  const healthyRate = withBlackholes.arrivals.length / withBlackholes.seconds;
  // Let the blackholed deliveries time out and retry for a while, then see how late their retries went out.
  await new Promise((r) => setTimeout(r, 5000));
  const lateness = await db.pool.query<{ ms: number }>(
    `SELECT extract(epoch FROM a.attempted_at - prev.next_attempt_at) * 1000 AS ms
       FROM delivery_attempts a
       JOIN webhook_deliveries d ON d.id = a.delivery_id
       JOIN LATERAL (SELECT p.next_attempt_at FROM delivery_attempts p
                      WHERE p.delivery_id = a.delivery_id AND p.attempted_at < a.attempted_at
                      ORDER BY p.attempted_at DESC LIMIT 1) prev ON true
      WHERE d.webhook_id = ANY($1::uuid[])`,
    [mixed.slice(45)],
  );
  const late = lateness.rows.map((r) => Number(r.ms));
  const blackholedAttempts = await db.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.webhook_id = ANY($1::uuid[])",
    [mixed.slice(45)],
  );
  rows.push({
    scenario: `${FAN_EVENTS} events → 45 healthy + 5 blackholed subscriptions (healthy deliveries only)`,
    deliveries: withBlackholes.arrivals.length,
    perSecond: healthyRate,
    baseline,
    p50: percentile(withBlackholes.latencies, 50),
    p99: percentile(withBlackholes.latencies, 99),
    notes:
      `${((healthyRate / allHealthyRate) * 100).toFixed(0)} % of the all-healthy rate; blackholed: ${blackholedAttempts.rows[0]!.n} attempts in ${(withBlackholes.seconds + 5).toFixed(0)} s, ` +
      `${late.length} retries late by p50 ${percentile(late, 50).toFixed(0)} ms, p99 ${percentile(late, 99).toFixed(0)} ms, max ${Math.max(...late).toFixed(0)} ms`,
  });
  await subscribe([]);
  }

  // 4. Two instances on one database.
  if (SCENARIOS.has("two")) {
  services.push(await startServiceProcess({ env, nodeArgs }));
  await subscribe(["/two"]);
  const two = await burst(BURST, () => true, BURST);
  rows.push({
    scenario: `burst of ${BURST} events → 1 subscription, 2 instances`,
    deliveries: two.arrivals.length,
    perSecond: two.arrivals.length / two.seconds,
    baseline,
    p50: percentile(two.latencies, 50),
    p99: percentile(two.latencies, 99),
    notes: `${((two.arrivals.length / two.seconds / oneRate) * 100).toFixed(0)} % of 1 instance; ${two.distinctEvents} distinct events, ${two.repeatedDeliveries} repeated deliveries`,
  });
  }

  const baselineAfter = await bareSender(receiver, cert, BURST);
  rows.push({ scenario: "bare sender, after", deliveries: BURST, perSecond: baselineAfter.perSecond, notes: `${baselineAfter.failed} non-204` });

  console.log("| scenario | deliveries | deliveries/s | vs bare sender | commit → first attempt p50 ms | p99 ms | notes |");
  console.log("|---|---:|---:|---:|---:|---:|---|");
  const fmt = (n: number | undefined, digits = 0) => (n === undefined || Number.isNaN(n) ? "" : n.toFixed(digits));
  for (const r of rows) {
    console.log(`| ${r.scenario} | ${r.deliveries} | ${fmt(r.perSecond)} | ${r.baseline ? `${((r.perSecond / r.baseline) * 100).toFixed(0)} %` : ""} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${r.notes} |`);
  }

  for (const s of services) s.child.kill("SIGTERM");
  await Promise.all(services.map((s) => s.exited));
  receiver.close();
  await db.close();
  await dbHandle.stop();
  cert.remove();
}
