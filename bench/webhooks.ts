// Webhook delivery benchmark: the real service (src/main.ts, its own process, NODE_ENV=production)
// delivers committed events to a local HTTPS receiver (receiver.ts, its own process), and a bare
// signed sender (bare-sender.ts, its own process, no database) POSTs the same kind of requests to
// the same receiver in the same run: the ratio between the two is the cost of the guarantees.
// Events are committed through the service's own outbox (recordEvents), as a scan commits them.
//   BENCH_WEBHOOK_SCENARIOS=warm,burst,steady,fan,two,slow   which scenarios (default: all)
//   BENCH_WEBHOOK_BURST=10000                      events in a burst
//   BENCH_CPU_PROF_DIR=dir                         each service process writes a CPU profile there
//   WEBHOOK_CONCURRENCY=… WEBHOOK_ENDPOINT_…=…     passed on to the service, to compare settings
import { randomBytes } from "node:crypto";
import { mintToken } from "../src/auth/mint-token.ts";
import { openDatabase } from "../src/db/client.ts";
import { recordEvents, type NewEvent } from "../src/events/outbox.ts";
import { createSelfSignedCert } from "../test/helpers/self-signed-cert.ts";
import { startServiceProcess, type ServiceProcess } from "../test/helpers/service-process.ts";
import { cpuSeconds } from "./cpu-time.ts";
import { findingEvent } from "./sample-finding-event.ts";
import { benchDatabase } from "./database.ts";
import { extraServiceFlags } from "./service-flags.ts";
import { runBareSender, startReceiver, type Arrival } from "./webhook-peers.ts";

const BURST = Number(process.env.BENCH_WEBHOOK_BURST ?? 10_000);
const SCENARIOS = new Set((process.env.BENCH_WEBHOOK_SCENARIOS ?? "warm,burst,steady,fan,two,slow").split(","));
const WARM_UP_EVENTS = 20;
const TWO_WARM_UP_EVENTS = 2000;
const SLOW_ANSWER_MS = 20; // the receiver's answer time under /slow/, as a distant endpoint's
const STEADY_RATE = 200;
const STEADY_SECONDS = 10;
const FAN_EVENTS = 200; // × 50 subscriptions
const BARE_IN_FLIGHT = 64;
const TIMEOUT_MS = 1000; // the service's attempt timeout here, so that blackholed endpoints time out quickly
const RETRY_INITIAL_MS = 200;
const BLACKHOLE_WATCH_MS = 5000; // how long the blackholed subscriptions are left to retry
const JWT_SECRET = "bench-secret-bench-secret-bench-secret-00";
const WAIT_LIMIT_MS = 180_000;

interface Row {
  scenario: string;
  deliveries: number;
  perSecond: number;
  /** Compared with the bare sender. */
  vsBare?: boolean;
  p50?: number;
  p99?: number;
  notes: string;
}

const percentile = (values: number[], p: number): number => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

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

/** The service, its database, the receiver and what the scenarios do with them. */
async function startHarness() {
  const database = await benchDatabase();
  const cert = createSelfSignedCert();
  const receiver = await startReceiver(cert, SLOW_ANSWER_MS);
  const env: Record<string, string> = {
    DATABASE_URL: database.url,
    NODE_ENV: "production",
    AUTH_JWT_SECRET: JWT_SECRET,
    WEBHOOK_SECRET_KEYS: randomBytes(32).toString("base64"),
    LOG_LEVEL: "warn",
    RATE_LIMIT_PER_MINUTE: "100000000",
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
    NODE_EXTRA_CA_CERTS: cert.certPath,
    WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    WEBHOOK_RETRY_INITIAL_MS: String(RETRY_INITIAL_MS),
    ...Object.fromEntries(
      Object.entries(process.env).filter((e): e is [string, string] => /^WEBHOOK_(CONCURRENCY|ENDPOINT_)/.test(e[0])),
    ),
  };
  const nodeArgs = [
    ...extraServiceFlags(),
    ...(process.env.BENCH_CPU_PROF_DIR ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`] : []),
  ];
  const startService = () => startServiceProcess({ env, nodeArgs });
  const services: ServiceProcess[] = [await startService()];
  const db = openDatabase(database.url);
  const token = await mintToken({ secret: JWT_SECRET, sub: "bench", scopes: ["admin"] });

  async function api(method: string, path: string, body?: unknown): Promise<{ id: string }> {
    const res = await fetch(`${services[0]!.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { id: string };
  }

  let live: string[] = [];
  /** CPU seconds so far: the service processes, Postgres (every process of that name), the receiver. */
  const cpu = () => ({
    service: cpuSeconds(services.map((s) => s.child.pid!)),
    postgres: cpuSeconds([], "postgres"),
    receiver: cpuSeconds([receiver.pid]),
  });
  const commit = (events: NewEvent[]) => db.prisma.$transaction((tx) => recordEvents(tx, events), { timeout: 60_000 });

  return {
    db,
    receiver,
    commit,
    /** Runs the bare sender against the receiver. */
    bare: (count: number) =>
      runBareSender({ url: `https://127.0.0.1:${receiver.port}/bare`, count, inFlight: BARE_IN_FLIGHT, ca: cert.cert }),
    async addInstance() {
      services.push(await startService());
    },
    /** Replaces the live subscriptions (all to vulnerability.created) with new ones to these paths. */
    async subscribe(paths: string[]): Promise<string[]> {
      for (const id of live) await api("PUT", `/webhooks/${id}`, { status: "disabled" });
      live = [];
      for (const [i, path] of paths.entries()) {
        const url = `https://127.0.0.1:${receiver.port}${path}`;
        live.push(
          (
            await api("POST", "/webhooks", {
              name: `bench-${Date.now()}-${i}`,
              url,
              events: ["vulnerability.created"],
              secret: `bench-secret-${i}`,
            })
          ).id,
        );
      }
      return live;
    },
    /**
     * Commits `count` events in one transaction, so that they all become visible at once, and waits
     * until `expected` arrivals satisfy `counted`. Rates and latencies run from the commit.
     */
    async burst(count: number, expected: number, counted: (a: Arrival) => boolean = () => true) {
      await receiver.take();
      await commit(Array.from({ length: count }, (_, i) => findingEvent(i)));
      const committed = Date.now();
      const cpuBefore = cpu();
      let arrivals: Arrival[] = [];
      await waitUntil(async () => {
        arrivals = arrivals.concat((await receiver.take()).filter(counted));
        return arrivals.length >= expected;
      }, `${expected} deliveries`);
      const cpuAfter = cpu();
      const seconds = (Math.max(...arrivals.map((a) => a.at)) - committed) / 1000;
      const { first, repeatedDeliveries } = firstArrivals(arrivals);
      const msPer = (k: keyof typeof cpuAfter) => (((cpuAfter[k] - cpuBefore[k]) * 1000) / arrivals.length).toFixed(2);
      return {
        arrivals: arrivals.length,
        perSecond: arrivals.length / seconds,
        seconds,
        latencies: [...first.values()].map((at) => at - committed),
        repeatedDeliveries,
        distinctEvents: first.size,
        cpu: Number.isNaN(cpuAfter.service)
          ? ""
          : `CPU ms per delivery: service ${msPer("service")}, Postgres ${msPer("postgres")}, receiver ${msPer("receiver")}`,
      };
    },
    async close() {
      for (const s of services) s.child.kill("SIGTERM");
      await Promise.all(services.map((s) => s.exited));
      receiver.close();
      await db.close();
      await database.stop();
      cert.remove();
    },
  };
}

type Harness = Awaited<ReturnType<typeof startHarness>>;

/**
 * A burst to one subscription: the rate, exactly once, and how long the first attempts took. After
 * `warmUp` events delivered one at a time first, as on a service that has been running a little:
 * its statements are then planned while the tables are small.
 */
async function burstToOne(h: Harness, label: string, warmUp = 0, pathPrefix = ""): Promise<Row> {
  const [hook] = await h.subscribe([`${pathPrefix}/burst-${label.replace(/\W/g, "")}`]);
  for (let i = 0; i < warmUp; i++) await h.burst(1, 1);
  const burst = await h.burst(BURST, BURST);
  // The last outcomes are written a moment after their requests arrived (after the answer, under /slow/).
  await waitUntil(async () => {
    const { rows } = await h.db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'pending'",
      [hook],
    );
    return rows[0]!.n === 0;
  }, "the outcomes of the burst");
  const notAttemptedOnce = await h.db.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND attempt_count <> 1",
    [hook],
  );
  const failedAttempts = await h.db.pool.query<{ why: string; n: number }>(
    `SELECT coalesce(status_code::text, left(error, 60)) AS why, count(*)::int AS n
       FROM delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
      WHERE d.webhook_id = $1 AND a.status_code IS DISTINCT FROM 204 GROUP BY 1`,
    [hook],
  );
  const failures = failedAttempts.rows.map((r) => ` (${r.n} × ${r.why})`).join("");
  return {
    scenario: `burst of ${BURST} events (one transaction) → 1 subscription, ${label}`,
    deliveries: burst.arrivals,
    perSecond: burst.perSecond,
    vsBare: true,
    p50: percentile(burst.latencies, 50),
    p99: percentile(burst.latencies, 99),
    notes: `first delivery ${Math.min(...burst.latencies)} ms after the commit; ${burst.cpu}; ${burst.distinctEvents} distinct events, ${burst.repeatedDeliveries} repeated deliveries, ${notAttemptedOnce.rows[0]!.n} not attempted exactly once${failures}`,
  };
}

/** A steady rate of events, each in its own transaction: event (its outbox timestamp) → first attempt. */
async function steady(h: Harness): Promise<Row> {
  await h.subscribe(["/steady"]);
  await h.receiver.take();
  const ids: string[] = [];
  const pending = new Set<Promise<void>>();
  const total = STEADY_RATE * STEADY_SECONDS;
  const started = Date.now();
  for (let i = 0; i < total; i++) {
    const wait = started + (i * 1000) / STEADY_RATE - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const committing: Promise<void> = h.commit([findingEvent(i)]).then(([id]) => void ids.push(id!));
    pending.add(committing);
    void committing.finally(() => pending.delete(committing));
  }
  await Promise.all(pending);
  const committedRate = total / ((Date.now() - started) / 1000);
  let arrivals: Arrival[] = [];
  await waitUntil(async () => {
    arrivals = arrivals.concat(await h.receiver.take());
    return arrivals.length >= total;
  }, "the steady events");
  const occurred = await h.db.pool.query<{ id: string; occurred_at: Date }>(
    "SELECT id, occurred_at FROM events WHERE id = ANY($1::uuid[])",
    [ids],
  );
  const occurredAt = new Map(occurred.rows.map((r) => [r.id, r.occurred_at.getTime()]));
  const latencies = [...firstArrivals(arrivals).first].map(([eventId, at]) => at - occurredAt.get(eventId)!);
  return {
    scenario: `steady ${STEADY_RATE} events/s for ${STEADY_SECONDS} s, one per transaction → 1 subscription (latency from the event's timestamp)`,
    deliveries: arrivals.length,
    perSecond: arrivals.length / STEADY_SECONDS,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    notes: `events committed at ${committedRate.toFixed(0)}/s`,
  };
}

/** Fifty subscriptions all healthy, then 5 of them blackholed (never answered): the healthy rate, and how late the retries went out. */
async function fanOut(h: Harness): Promise<Row[]> {
  const paths = Array.from({ length: 50 }, (_, i) => `/fan/${i}`);
  await h.subscribe(paths);
  const allHealthy = await h.burst(FAN_EVENTS, FAN_EVENTS * 50);

  const hooks = await h.subscribe([
    ...paths.slice(0, 45).map((p) => `${p}-again`),
    ...Array.from({ length: 5 }, (_, i) => `/blackhole/${i}`),
  ]);
  const blackholed = hooks.slice(45);
  const mixed = await h.burst(FAN_EVENTS, FAN_EVENTS * 45, (a) => !a.path.startsWith("/blackhole/"));
  await new Promise((r) => setTimeout(r, BLACKHOLE_WATCH_MS));
  // Lateness of a retry: when it was attempted, minus when the attempt before it scheduled it for.
  const retries = await h.db.pool.query<{ ms: number }>(
    `SELECT extract(epoch FROM a.attempted_at - prev.next_attempt_at) * 1000 AS ms
       FROM delivery_attempts a
       JOIN webhook_deliveries d ON d.id = a.delivery_id
       JOIN LATERAL (SELECT p.next_attempt_at FROM delivery_attempts p
                      WHERE p.delivery_id = a.delivery_id AND p.attempted_at < a.attempted_at
                      ORDER BY p.attempted_at DESC LIMIT 1) prev ON true
      WHERE d.webhook_id = ANY($1::uuid[])`,
    [blackholed],
  );
  const late = retries.rows.map((r) => Number(r.ms));
  const attempts = await h.db.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.webhook_id = ANY($1::uuid[])",
    [blackholed],
  );
  await h.subscribe([]);
  return [
    {
      scenario: `${FAN_EVENTS} events → 50 healthy subscriptions`,
      deliveries: allHealthy.arrivals,
      perSecond: allHealthy.perSecond,
      vsBare: true,
      p50: percentile(allHealthy.latencies, 50),
      p99: percentile(allHealthy.latencies, 99),
      notes: allHealthy.cpu,
    },
    {
      scenario: `${FAN_EVENTS} events → 45 healthy + 5 blackholed subscriptions (the healthy deliveries; ${TIMEOUT_MS} ms timeout, first retry after ${RETRY_INITIAL_MS} ms)`,
      deliveries: mixed.arrivals,
      perSecond: mixed.perSecond,
      vsBare: true,
      p50: percentile(mixed.latencies, 50),
      p99: percentile(mixed.latencies, 99),
      notes:
        `**${((mixed.perSecond / allHealthy.perSecond) * 100).toFixed(0)} % of the all-healthy rate**; blackholed: ${attempts.rows[0]!.n} attempts in ` +
        `${(mixed.seconds + BLACKHOLE_WATCH_MS / 1000).toFixed(0)} s, ${late.length} retries, late by p50 ${percentile(late, 50).toFixed(0)} ms, ` +
        `p99 ${percentile(late, 99).toFixed(0)} ms, max ${Math.max(...late).toFixed(0)} ms`,
    },
  ];
}

export async function runWebhookBench(): Promise<void> {
  const h = await startHarness();
  const rows: Row[] = [];
  let baseline = NaN;
  try {
    const before = await h.bare(BURST);
    baseline = before.perSecond;
    rows.push({
      scenario: `bare sender (undici, keep-alive, ${BARE_IN_FLIGHT} in flight, same signatures), before`,
      deliveries: BURST,
      perSecond: before.perSecond,
      notes: `${before.failed} non-204`,
    });
    await h.receiver.take();

    let oneInstance: Row | undefined;
    if (SCENARIOS.has("warm"))
      rows.push(await burstToOne(h, `1 instance, after ${WARM_UP_EVENTS} events one at a time`, WARM_UP_EVENTS));
    if (SCENARIOS.has("burst")) rows.push((oneInstance = await burstToOne(h, "1 instance")));
    if (SCENARIOS.has("steady")) rows.push(await steady(h));
    if (SCENARIOS.has("fan")) rows.push(...(await fanOut(h)));
    let oneInstanceSlow: Row | undefined;
    if (SCENARIOS.has("slow"))
      rows.push(
        (oneInstanceSlow = await burstToOne(
          h,
          `1 instance, receiver answering after ${SLOW_ANSWER_MS} ms`,
          0,
          "/slow",
        )),
      );
    if (SCENARIOS.has("two") || SCENARIOS.has("slow")) {
      await h.addInstance();
      // The new instance's code and connections warm up as the first one's did in the scenarios before.
      await h.subscribe(["/two-warm-up"]);
      await h.burst(TWO_WARM_UP_EVENTS, TWO_WARM_UP_EVENTS);
    }
    const comparedWith = (row: Row, one: Row | undefined) => {
      if (one) row.notes = `**${((row.perSecond / one.perSecond) * 100).toFixed(0)} % of 1 instance**; ${row.notes}`;
      return row;
    };
    if (SCENARIOS.has("two")) rows.push(comparedWith(await burstToOne(h, "2 instances"), oneInstance));
    if (SCENARIOS.has("slow"))
      rows.push(
        comparedWith(
          await burstToOne(h, `2 instances, receiver answering after ${SLOW_ANSWER_MS} ms`, 0, "/slow"),
          oneInstanceSlow,
        ),
      );

    const after = await h.bare(BURST);
    rows.push({
      scenario: "bare sender, after",
      deliveries: BURST,
      perSecond: after.perSecond,
      notes: `${after.failed} non-204`,
    });
  } finally {
    await h.close();
  }

  const fmt = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? "" : n.toFixed(0));
  console.log(`Ratios are to the bare sender's rate before the scenarios (${fmt(baseline)}/s).\n`);
  console.log("| scenario | deliveries | deliveries/s | vs bare sender | first attempt p50 ms | p99 ms | notes |");
  console.log("|---|---:|---:|---:|---:|---:|---|");
  for (const r of rows) {
    const ratio = r.vsBare ? `${((r.perSecond / baseline) * 100).toFixed(0)} %` : "";
    console.log(
      `| ${r.scenario} | ${r.deliveries} | ${fmt(r.perSecond)} | ${ratio} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${r.notes} |`,
    );
  }
}
