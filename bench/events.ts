// The event log (issue 23), on the real service (dist/main.js, its own process, NODE_ENV=production):
//   1. replay: a graphql-ws subscriber resumes before 100,000 committed events (BENCH_EVENTS_LOG) and
//      catches up; events/s, beside the bare floor: this process reading the same pages with the
//      service's own statement (no GraphQL, no WebSocket);
//   2. GET /events?limit=500 from random cursors while writers commit 1,000 events/s (in a worker
//      thread, event-writers.ts, off the event loop that times the reads); latency percentiles to
//      the page's last byte (and with this process's JSON.parse of it, which the bare reader does
//      not do), beside the same statement run by this process;
//   3. live latency of BENCH_EVENTS_SUBSCRIBERS (100) graphql-ws subscribers on `events`, events
//      committed at BENCH_EVENTS_LIVE_RATE (50/s) one per transaction, measured alone and then while
//      one more subscriber catches up on the whole log, BENCH_EVENTS_ROUNDS (3) times in the same run
//      (the ratio of the p99s, each round's and all rounds' together). The
//      catching-up subscriber runs in a worker thread (catch-up-client.ts), so that its messages do not
//      delay the timing of the others' in this process; the thread is started and connected before the
//      phase begins.
// BENCH_CPU_PROF_DIR=dir writes the service's CPU profile there.
import { Worker } from "node:worker_threads";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { encodeEventCursor, readHead, readLog, readRenderedLog } from "../src/events/event-log.ts";
import { EVENT_VIEW_PAGES } from "../src/domain/events/event.view.ts";
import { eventRows } from "../src/events/event-rows.ts";
import { recordEventRows, recordEvents, type NewEvent } from "../src/events/outbox.ts";
import { startBenchService, type BenchService } from "./bench-service.ts";
import { cpuSeconds } from "./cpu-time.ts";
import { scanEvent } from "./sample-scan-event.ts";

const LOG = Number(process.env.BENCH_EVENTS_LOG ?? 100_000);
const SUBSCRIBERS = Number(process.env.BENCH_EVENTS_SUBSCRIBERS ?? 100);
const LIVE_RATE = Number(process.env.BENCH_EVENTS_LIVE_RATE ?? 50);
const LIVE_SECONDS = Number(process.env.BENCH_EVENTS_LIVE_SECONDS ?? 10);
/** Rounds of (alone, beside a catch-up); the p99s of all rounds together rest on more events than one round's. */
const ROUNDS = Number(process.env.BENCH_EVENTS_ROUNDS ?? 3);
const WRITE_RATE = 1_000; // events/s while GET /events is read
const READ_SECONDS = Number(process.env.BENCH_EVENTS_READ_SECONDS ?? 10);
const PAGE = 500;
const SUBSCRIPTION = "subscription($after: String) { events(after: $after) { eventId timestamp cursor } }";

const percentile = (values: number[], p: number): number => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Received {
  eventId: string;
  timestamp: string;
  cursor: string;
}

export async function runEventsBench(): Promise<void> {
  const bench = await startBenchService();
  try {
    await measure(bench);
  } finally {
    await bench.stop();
  }
}

async function measure({ service, db, token, databaseUrl }: BenchService): Promise<void> {
  const wsUrl = `${service.baseUrl.replace("http", "ws")}/graphql`;
  const commit = (events: NewEvent[]) => db.prisma.$transaction((tx) => recordEvents(tx, events), { timeout: 60_000 });
  const waitForHead = async (position: number) => {
    while ((await readHead(db.pool)) < position) await sleep(50);
  };

  // The log: LOG events in transactions of 1,000, numbered by the service's fan-out.
  const seeded = Date.now();
  for (let n = 0; n < LOG; n += 1_000)
    await commit(Array.from({ length: Math.min(1_000, LOG - n) }, (_, i) => scanEvent(`seed-${n + i}`)));
  await waitForHead(LOG);
  console.log(
    `${LOG.toLocaleString("en")} events committed and numbered into the log in ${((Date.now() - seeded) / 1000).toFixed(1)} s`,
  );

  type CatchUp = Promise<{ seconds: number; received: number; repeated: number }>;
  /**
   * A subscriber (in a worker thread, loaded and connected) ready to replay the log from its start;
   * `go()` starts it, and resolves when it has `count` events.
   */
  async function readyToCatchUp(count: number): Promise<{ go: () => CatchUp }> {
    const worker = new Worker(new URL("./ts-worker.mjs", import.meta.url), {
      argv: [new URL("./catch-up-client.ts", import.meta.url).href],
      workerData: { url: wsUrl, token, after: encodeEventCursor(0), count },
    });
    const failed = new Promise<never>((_, reject) => worker.once("error", reject));
    await Promise.race([new Promise((resolve) => worker.once("message", resolve)), failed]);
    return {
      go() {
        const done: CatchUp = Promise.race([
          new Promise<Awaited<CatchUp>>((resolve) => worker.once("message", resolve)),
          failed,
        ]);
        worker.postMessage("go");
        return done;
      },
    };
  }

  // 1. Replay.
  const floorStarted = Date.now();
  for (let after = 0, read = 0; read < LOG;) {
    const page = await readLog(db.pool, { after, limit: 1_000, scanLimit: 1_000 });
    read += page.events.length;
    after = page.readThrough;
  }
  const floorPerSecond = LOG / ((Date.now() - floorStarted) / 1000);
  const alone = await readyToCatchUp(LOG);
  const cpuBefore = cpuSeconds([service.child.pid!]);
  const replay = await alone.go();
  const replayCpu = cpuSeconds([service.child.pid!]) - cpuBefore;
  console.log(
    "\n| scenario | events | seconds | events/s | bare floor (same SQL, this process) | repeated | service CPU µs per event |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|");
  console.log(
    `| a subscriber catching up on the log, alone | ${replay.received} | ${replay.seconds.toFixed(2)} | ${Math.round(replay.received / replay.seconds).toLocaleString("en")} | ${Math.round(floorPerSecond).toLocaleString("en")}/s | ${replay.repeated} | ${((replayCpu * 1e6) / replay.received).toFixed(0)} |`,
  );

  // 2. GET /events?limit=500 from random cursors while writers (event-writers.ts) commit WRITE_RATE events/s.
  const writers = new Worker(new URL("./ts-worker.mjs", import.meta.url), {
    argv: [new URL("./event-writers.ts", import.meta.url).href],
    workerData: { url: databaseUrl, rate: WRITE_RATE },
  });
  const writersFailed = new Promise<never>((_, reject) => writers.once("error", reject));
  await Promise.race([new Promise((resolve) => writers.once("message", resolve)), writersFailed]);
  const headers = { authorization: `Bearer ${token}` };
  /** To the page's last byte, and to the page parsed in this process (the bare reader parses nothing). */
  const serviceTimes: number[] = [];
  const parsedTimes: number[] = [];
  const bareTimes: number[] = [];
  const readCpuBefore = cpuSeconds([service.child.pid!]);
  const readUntil = Date.now() + READ_SECONDS * 1000;
  let pages = 0;
  while (Date.now() < readUntil) {
    const after = Math.floor(Math.random() * (LOG - PAGE));
    let started = performance.now();
    const res = await fetch(`${service.baseUrl}/events?limit=${PAGE}&after=${encodeEventCursor(after)}`, { headers });
    const bytes = await res.arrayBuffer();
    serviceTimes.push(performance.now() - started);
    const body = JSON.parse(new TextDecoder().decode(bytes)) as unknown[];
    parsedTimes.push(performance.now() - started);
    if (res.status !== 200 || body.length !== PAGE)
      throw new Error(`GET /events: ${res.status}, ${body.length} events`);
    started = performance.now();
    await readRenderedLog(db.pool, { after, limit: PAGE, scanLimit: PAGE }, EVENT_VIEW_PAGES);
    bareTimes.push(performance.now() - started);
    pages++;
  }
  const readCpu = cpuSeconds([service.child.pid!]) - readCpuBefore;
  const stopped = Promise.race([
    new Promise<{ written: number; seconds: number }>((resolve) => writers.once("message", resolve)),
    writersFailed,
  ]);
  writers.postMessage("stop");
  const { written, seconds: writeSeconds } = await stopped;
  console.log(
    `\nGET /events?limit=${PAGE} from random cursors, ${pages} pages in ${READ_SECONDS} s, while writers committed ${Math.round(written / writeSeconds).toLocaleString("en")} events/s ` +
      `(the service's CPU ${((readCpu * 1000) / pages).toFixed(1)} ms a page, the writers' fan-out included):`,
  );
  console.log("| reader | p50 ms | p90 ms | p99 ms | max ms |");
  console.log("|---|---:|---:|---:|---:|");
  for (const [label, times] of [
    ["GET /events (the service), to the last byte", serviceTimes],
    ["GET /events, and the page parsed by this process", parsedTimes],
    ["the same statement, this process", bareTimes],
  ] as const) {
    console.log(
      `| ${label} | ${percentile(times, 50).toFixed(1)} | ${percentile(times, 90).toFixed(1)} | ${percentile(times, 99).toFixed(1)} | ${times.reduce((a, b) => Math.max(a, b), 0).toFixed(1)} |`,
    );
  }
  await waitForHead(LOG + written);

  // 3. Live latency of SUBSCRIBERS subscribers, alone and beside a subscriber catching up.
  /** Every arrival during a phase; those of the phase's own events are counted once it is over. */
  const arrivals: { eventId: string; latencyMs: number }[] = [];
  const counted = new Set<string>();
  const clients: Client[] = [];
  let warmed = 0;
  for (let i = 0; i < SUBSCRIBERS; i++) {
    const client = createClient({
      url: wsUrl,
      webSocketImpl: WebSocket,
      lazy: false,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${token}` },
    });
    clients.push(client);
    let first = true;
    client.subscribe<{ events: Received }>(
      { query: SUBSCRIPTION },
      {
        next: ({ data }) => {
          if (first) {
            first = false;
            warmed++;
          }
          arrivals.push({ eventId: data!.events.eventId, latencyMs: Date.now() - Date.parse(data!.events.timestamp) });
        },
        error: (err) => console.error(`subscriber ${i}:`, err),
        complete: () => {},
      },
    );
  }
  while (warmed < SUBSCRIBERS) {
    await commit([scanEvent("warm-up")]);
    await sleep(200);
  }
  await sleep(500);
  // Each live event is one statement, autocommitted (the outbox's INSERT with its NOTIFY), on a
  // connection of this process's own: an interactive transaction's round trips, timed from before its
  // first, would count this busy process's own delays as the service's.
  const writer = await db.pool.connect();
  /** Live events at LIVE_RATE for LIVE_SECONDS, or for as long as `busy` is pending; their latencies. */
  const livePhase = async (
    busy?: Promise<unknown>,
  ): Promise<{
    latencies: number[];
    p50: number;
    p99: number;
    max: number;
    expected: number;
    received: number;
    cpu: string;
  }> => {
    arrivals.length = 0;
    counted.clear();
    const cpuStart = cpuSeconds([service.child.pid!]);
    const postgresStart = cpuSeconds([], "postgres");
    const harnessStart = cpuSeconds([process.pid]);
    let pending = busy !== undefined;
    void busy?.then(() => (pending = false));
    const started = Date.now();
    for (let n = 0; busy ? pending : n < LIVE_RATE * LIVE_SECONDS; n++) {
      const due = started + (n * 1000) / LIVE_RATE;
      if (due > Date.now()) await sleep(due - Date.now());
      const rows = eventRows([scanEvent("live")]);
      await recordEventRows(writer, JSON.stringify(rows));
      counted.add(rows[0]!.id);
    }
    const seconds = (Date.now() - started) / 1000;
    const percent = (used: number) => `${Math.round((used / seconds) * 100)} %`;
    const cpu = `${percent(cpuSeconds([service.child.pid!]) - cpuStart)}, ${percent(cpuSeconds([], "postgres") - postgresStart)}, ${percent(cpuSeconds([process.pid]) - harnessStart)}`;
    const expected = counted.size * SUBSCRIBERS;
    const phase = () => arrivals.filter((a) => counted.has(a.eventId)).map((a) => a.latencyMs);
    const deadline = Date.now() + 30_000;
    while (phase().length < expected && Date.now() < deadline) await sleep(100);
    const latencies = phase();
    return {
      latencies,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: latencies.reduce((a, b) => Math.max(a, b), 0),
      expected,
      received: latencies.length,
      cpu,
    };
  };
  console.log(
    `\n${SUBSCRIBERS} live graphql-ws subscribers on \`events\`, ${LIVE_RATE} events/s, one transaction each (latency from the event's commit-time timestamp), alone for ${LIVE_SECONDS} s and while one more subscriber catches up on ${LOG.toLocaleString("en")} events, ${ROUNDS} rounds:`,
  );
  console.log(
    "| phase | deliveries expected / received | p50 ms | p99 ms | max ms | p99 vs alone before | the catching-up subscriber | CPU: service, Postgres, this harness (its clients) |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---|---|");
  const all = { alone: [] as number[], beside: [] as number[] };
  for (let round = 1; round <= ROUNDS; round++) {
    const quiet = await livePhase();
    const beside = (await readyToCatchUp(LOG)).go();
    const busy = await livePhase(beside);
    const replayBeside = await beside;
    // Not push(...latencies): a slow machine's rounds hold more deliveries than a call's arguments.
    all.alone = all.alone.concat(quiet.latencies);
    all.beside = all.beside.concat(busy.latencies);
    console.log(
      `| alone | ${quiet.expected} / ${quiet.received} | ${quiet.p50} | ${quiet.p99} | ${quiet.max} | | | ${quiet.cpu} |`,
    );
    console.log(
      `| catching up beside | ${busy.expected} / ${busy.received} | ${busy.p50} | ${busy.p99} | ${busy.max} | ${(busy.p99 / quiet.p99).toFixed(2)}x | ${Math.round(replayBeside.received / replayBeside.seconds).toLocaleString("en")} events/s, ${replayBeside.repeated} repeated | ${busy.cpu} |`,
    );
  }

  const [aloneP99, besideP99] = [percentile(all.alone, 99), percentile(all.beside, 99)];
  console.log(
    `All ${ROUNDS} rounds together: p99 alone ${aloneP99} ms (${all.alone.length} deliveries), beside a catch-up ${besideP99} ms (${all.beside.length}): ${(besideP99 / aloneP99).toFixed(2)}x`,
  );
  writer.release();
  for (const client of clients) await client.dispose();
}
