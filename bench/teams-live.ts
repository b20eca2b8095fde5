// Team access on the live paths (CONTRACT §17), before and after, in one run: the build before
// teams (BENCH_TEAMS_BEFORE: its dist/, e.g. of a worktree at that commit) and this one, each on a
// fresh database, alternated five times. Webhook fan-out: 200 events in one transaction to 50
// subscriptions (before: for every application; after: each scoped to the application's team), the
// rate of the 10,000 deliveries and their p99 from the commit. Broadcast: 1,000 graphql-ws
// subscribers of `events` (after: 50 of them team-scoped tokens of that team), 20 events/s for 10 s,
// p99 over every (event, subscriber) pair and the service's CPU per 1,000 deliveries. Each build's
// own outbox (its dist/events/outbox.js) commits its events, as its scans would. BENCH_CPU_PROF_DIR:
// each service's CPU profile under before/ and after/ there.
import { randomBytes } from "node:crypto";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createClient, type Client } from "graphql-ws";
import pg from "pg";
import WebSocket from "ws";
import { mintToken } from "../src/auth/mint-token.ts";
import { newId } from "../src/ids.ts";
import { createSelfSignedCert, type SelfSignedCert } from "../test/helpers/self-signed-cert.ts";
import { ROOT, startServiceProcess, type ServiceProcess } from "../test/helpers/service-process.ts";
import { cpuSeconds } from "./cpu-time.ts";
import { benchDatabase, siblingDatabase } from "./database.ts";
import { startReceiver, type Receiver } from "./webhook-peers.ts";

const RUNS = Number(process.env.BENCH_TEAMS_RUNS ?? 5);
const SUBSCRIPTIONS = 50;
const FAN_EVENTS = 200;
const SUBSCRIBERS = 1_000;
const TEAM_SCOPED_SUBSCRIBERS = 50;
const EVENTS_PER_SECOND = 20;
const SECONDS = 10;
const TEAM = "team-live";
const SECRET = "bench-secret-bench-secret-bench-secret-00";

type RecordEvents = (runner: pg.ClientBase, events: unknown[]) => Promise<string[]>;

interface Side {
  label: "before" | "after";
  service: ServiceProcess;
  pool: pg.Pool;
  recordEvents: RecordEvents;
  application: string;
  admin: string;
  scoped: string;
  stop(): Promise<void>;
}

async function startSide(
  label: Side["label"],
  dist: string,
  cert: SelfSignedCert,
  database: { url: string; stop(): Promise<void> },
): Promise<Side> {
  const profileDir = process.env.BENCH_CPU_PROF_DIR && path.join(process.env.BENCH_CPU_PROF_DIR, label);
  const service = await startServiceProcess({
    main: path.join(dist, "main.js"),
    nodeArgs: profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [],
    env: {
      DATABASE_URL: database.url,
      NODE_ENV: "production",
      AUTH_JWT_SECRET: SECRET,
      WEBHOOK_SECRET_KEYS: randomBytes(32).toString("base64"),
      LOG_LEVEL: "warn",
      RATE_LIMIT_PER_MINUTE: "100000000",
      WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
      NODE_EXTRA_CA_CERTS: cert.certPath,
      ...(label === "after" && { AUTH_TEAMS_CLAIM: "teams" }),
    },
  });
  const admin = await mintToken({ secret: SECRET, sub: "bench", scopes: ["admin"] });
  const scoped = await mintToken({ secret: SECRET, sub: "team-dev", scopes: ["scans:read"], teams: [TEAM] });
  const res = await fetch(`${service.baseUrl}/applications`, {
    method: "POST",
    headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "live", owner: TEAM }),
  });
  const { id } = (await res.json()) as { id: string };
  const { recordEvents } = (await import(pathToFileURL(path.join(dist, "events/outbox.js")).href)) as {
    recordEvents: RecordEvents;
  };
  const pool = new pg.Pool({ connectionString: database.url, max: 4 });
  return {
    label,
    service,
    pool,
    recordEvents,
    application: id,
    admin,
    scoped,
    async stop() {
      await pool.end();
      service.child.kill("SIGTERM");
      await service.exited;
      await database.stop();
    },
  };
}

async function commit(side: Side, events: unknown[]): Promise<string[]> {
  const client = await side.pool.connect();
  try {
    await client.query("BEGIN");
    const ids = await side.recordEvents(client, events);
    await client.query("COMMIT");
    return ids;
  } finally {
    client.release();
  }
}

async function api(side: Side, method: string, url: string, body: unknown): Promise<{ id: string }> {
  const res = await fetch(`${side.service.baseUrl}${url}`, {
    method,
    headers: { authorization: `Bearer ${side.admin}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string };
}

/** 50 subscriptions to the receiver under /<label>/; after, each for the application's team. */
async function subscribe(side: Side, receiver: Receiver): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < SUBSCRIPTIONS; i++)
    ids.push(
      (
        await api(side, "POST", "/webhooks", {
          name: `fan-${i}`,
          url: `https://127.0.0.1:${receiver.port}/${side.label}/${i}`,
          events: ["vulnerability.created"],
          secret: `bench-secret-${i}`,
          ...(side.label === "after" && { teams: [TEAM] }),
        })
      ).id,
    );
  return ids;
}

const finding = (application: string, n: number) => ({
  type: "vulnerability.created",
  applicationId: application,
  data: {
    id: newId(),
    severity: "high",
    applicationId: application,
    title: `finding ${n}`,
    createdAt: new Date().toISOString(),
  },
});

async function fanOut(side: Side, receiver: Receiver): Promise<Pick<Run, "fanPerSecond" | "fanP99">> {
  await receiver.take();
  await commit(
    side,
    Array.from({ length: FAN_EVENTS }, (_, n) => finding(side.application, n)),
  );
  const committed = Date.now();
  const expected = FAN_EVENTS * SUBSCRIPTIONS;
  const arrivals: number[] = [];
  const deadline = committed + 180_000;
  while (arrivals.length < expected) {
    if (Date.now() > deadline) throw new Error(`${side.label}: ${arrivals.length} of ${expected} deliveries`);
    for (const a of await receiver.take()) if (a.path.startsWith(`/${side.label}/`)) arrivals.push(a.at - committed);
    await new Promise((r) => setTimeout(r, 20));
  }
  if (arrivals.length !== expected) throw new Error(`${side.label}: ${arrivals.length} deliveries, not ${expected}`);
  arrivals.sort((x, y) => x - y);
  return { fanPerSecond: expected / (arrivals.at(-1)! / 1000), fanP99: percentile(arrivals, 99) };
}

async function broadcast(
  side: Side,
): Promise<Pick<Run, "broadcastP99" | "broadcastCpu" | "firstFiftyP99" | "restP99">> {
  const wsUrl = `${side.service.baseUrl.replace("http", "ws")}/graphql`;
  const latencies: number[] = [];
  /** Of the first 50 subscribers (after: the team-scoped ones), and of the others. */
  const byGroup: [number[], number[]] = [[], []];
  const warmed = new Set<number>();
  const clients: Client[] = [];
  for (let i = 0; i < SUBSCRIBERS; i++) {
    const token = side.label === "after" && i < TEAM_SCOPED_SUBSCRIBERS ? side.scoped : side.admin;
    const client = createClient({
      url: wsUrl,
      webSocketImpl: WebSocket,
      lazy: false,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${token}` },
    });
    clients.push(client);
    client.subscribe<{ events: { timestamp: string; data: { triggeredBy: string } } }>(
      { query: "subscription { events(types: [SCAN_STARTED]) { eventId timestamp data } }" },
      {
        next: ({ data }) => {
          if (data!.events.data.triggeredBy === "warm-up") warmed.add(i);
          else {
            const latency = Date.now() - Date.parse(data!.events.timestamp);
            latencies.push(latency);
            byGroup[i < TEAM_SCOPED_SUBSCRIBERS ? 0 : 1].push(latency);
          }
        },
        error: (err) => console.error(`subscriber ${i}:`, err),
        complete: () => {},
      },
    );
  }
  const scanStarted = (triggeredBy: string) => ({
    type: "scan.started",
    applicationId: side.application,
    data: {
      id: newId(),
      applicationId: side.application,
      scanType: "sast",
      status: "running",
      triggeredBy,
      startedAt: new Date().toISOString(),
      completedAt: null,
      summary: null,
    },
  });
  const deadline = Date.now() + 60_000;
  while (warmed.size < SUBSCRIBERS) {
    if (Date.now() > deadline) throw new Error(`${side.label}: ${warmed.size} of ${SUBSCRIBERS} warmed up`);
    await commit(side, [scanStarted("warm-up")]);
    await new Promise((r) => setTimeout(r, 500));
  }
  await new Promise((r) => setTimeout(r, 1000));
  latencies.length = 0;
  const cpuBefore = cpuSeconds([side.service.child.pid!]);
  const start = Date.now();
  const events = EVENTS_PER_SECOND * SECONDS;
  for (let n = 0; n < events; n++) {
    const due = start + (n * 1000) / EVENTS_PER_SECOND;
    if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
    await commit(side, [scanStarted("bench")]);
  }
  const expected = events * SUBSCRIBERS;
  const drain = Date.now() + 30_000;
  while (latencies.length < expected && Date.now() < drain) await new Promise((r) => setTimeout(r, 100));
  const cpu = cpuSeconds([side.service.child.pid!]) - cpuBefore;
  for (const client of clients) await client.dispose();
  if (latencies.length !== expected) throw new Error(`${side.label}: ${latencies.length} of ${expected} deliveries`);
  for (const values of [latencies, ...byGroup]) values.sort((x, y) => x - y);
  return {
    broadcastP99: percentile(latencies, 99),
    broadcastCpu: (cpu * 1e6) / expected,
    firstFiftyP99: percentile(byGroup[0], 99),
    restP99: percentile(byGroup[1], 99),
  };
}

export async function runTeamsLiveBench(): Promise<void> {
  const beforeDir = process.env.BENCH_TEAMS_BEFORE;
  if (!beforeDir) {
    console.log("BENCH_TEAMS_BEFORE unset (the dist/ of the build before teams): the live before/after skipped.");
    return;
  }
  const cert = createSelfSignedCert();
  const receiver = await startReceiver(cert, 20);
  // Two databases of one server (an embedded Postgres has one port).
  const first = await benchDatabase();
  const sides = [
    await startSide("before", path.resolve(beforeDir), cert, first),
    await startSide("after", path.join(ROOT, "dist"), cert, await siblingDatabase(first.url)),
  ];
  try {
    for (const side of sides) await subscribe(side, receiver);
    const results = { before: [] as Run[], after: [] as Run[] };
    for (let run = 0; run < RUNS; run++) {
      const order = run % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order)
        results[side.label].push({ ...(await fanOut(side, receiver)), ...(await broadcast(side)) });
    }
    report(results);
  } finally {
    for (const side of [...sides].reverse()) await side.stop();
    receiver.close();
    cert.remove();
  }
}

interface Run {
  fanPerSecond: number;
  fanP99: number;
  broadcastP99: number;
  /** The service's CPU ms per 1,000 deliveries. */
  broadcastCpu: number;
  firstFiftyP99: number;
  restP99: number;
}

function report(results: { before: Run[]; after: Run[] }): void {
  const line = (name: string, pick: (r: Run) => number, digits: number) => {
    const [b, a] = [results.before.map(pick), results.after.map(pick)];
    console.log(
      `| ${name} | ${b.map((v) => v.toFixed(digits)).join(", ")} | ${a.map((v) => v.toFixed(digits)).join(", ")} | ${(median(a) / median(b)).toFixed(3)} |`,
    );
  };
  console.log(
    `${RUNS} runs alternated; webhooks: ${FAN_EVENTS} events × ${SUBSCRIPTIONS} subscriptions (after: team-scoped); broadcast: ${SUBSCRIBERS} subscribers (after: ${TEAM_SCOPED_SUBSCRIBERS} team-scoped), ${EVENTS_PER_SECOND} events/s for ${SECONDS} s`,
  );
  console.log("| figure | before (runs) | after (runs) | median after / before |");
  console.log("|---|---|---|---:|");
  line("webhook fan-out deliveries/s", (r) => r.fanPerSecond, 0);
  line("webhook fan-out p99 ms from the commit", (r) => r.fanP99, 0);
  line("broadcast p99 ms from the commit", (r) => r.broadcastP99, 0);
  line("broadcast p99 ms, the first 50 subscribers (after: team-scoped)", (r) => r.firstFiftyP99, 0);
  line("broadcast p99 ms, the other 950", (r) => r.restP99, 0);
  line("broadcast service CPU ms per 1,000 deliveries", (r) => r.broadcastCpu, 1);
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
