// Live subscribers (issue 9): BENCH_SUBSCRIBERS (1,000) graphql-ws clients, each on its own socket,
// subscribe to `events` on the real service (dist/main.js, its own process); events are then
// committed through the service's outbox (recordEvents, as a scan commits them) at a steady rate,
// each in its own transaction. Prints event → subscriber latency over every (event, client) pair
// (from the timestamp the outbox gives the event inside its transaction), whether every client got
// every event exactly once, the service's CPU per delivered message and its resident memory idle,
// with the sockets open, and after they closed.
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { recordEvents } from "../src/events/outbox.ts";
import { newId } from "../src/ids.ts";
import { startBenchService } from "./bench-service.ts";
import { cpuSeconds } from "./cpu-time.ts";

const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 1000);
const EVENTS_PER_SECOND = Number(process.env.BENCH_SUBSCRIBER_EVENTS_PER_SECOND ?? 20);
const SECONDS = Number(process.env.BENCH_SUBSCRIBER_SECONDS ?? 10);
const SUBSCRIPTION = "subscription { events { eventId eventType timestamp data } }";

interface Arrival {
  client: number;
  eventId: string;
  latencyMs: number;
}

/** The service's resident memory in MiB (its /metrics). */
async function rssMiB(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Math.round(Number(/^process_resident_memory_bytes (\d+)/m.exec(text)?.[1] ?? 0) / 2 ** 20);
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

export async function runSubscriberBench(): Promise<void> {
  const { service, db, token, stop } = await startBenchService();
  const application = (await (
    await fetch(`${service.baseUrl}/applications`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "subscribed" }),
    })
  ).json()) as { id: string };
  const idle = await rssMiB(service.baseUrl);

  const arrivals: Arrival[] = [];
  const warmed = new Set<number>();
  const clients: Client[] = [];
  const wsUrl = `${service.baseUrl.replace("http", "ws")}/graphql`;
  for (let i = 0; i < SUBSCRIBERS; i++) {
    const client = createClient({
      url: wsUrl,
      webSocketImpl: WebSocket,
      lazy: false,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${token}` },
    });
    clients.push(client);
    client.subscribe<{ events: { eventId: string; timestamp: string; data: { triggeredBy: string } } }>(
      { query: SUBSCRIPTION },
      {
        next: ({ data }) => {
          const event = data!.events;
          if (event.data.triggeredBy === "warm-up") warmed.add(i);
          else
            arrivals.push({ client: i, eventId: event.eventId, latencyMs: Date.now() - Date.parse(event.timestamp) });
        },
        error: (err) => console.error(`subscriber ${i}:`, err),
        complete: () => {},
      },
    );
  }
  /** One scan.started event in its own transaction; warm-ups say so in triggeredBy. */
  const commit = (triggeredBy: "warm-up" | "bench") => {
    const data = {
      id: newId(),
      applicationId: application.id,
      scanType: "sast",
      status: "running",
      triggeredBy,
      startedAt: new Date().toISOString(),
      completedAt: null,
      summary: null,
    };
    return db.prisma.$transaction((tx) =>
      recordEvents(tx, [{ type: "scan.started", applicationId: application.id, data }]),
    );
  };

  // Subscribed once a warm-up event reached every client.
  const deadline = Date.now() + 60_000;
  while (warmed.size < SUBSCRIBERS) {
    if (Date.now() > deadline)
      throw new Error(`only ${warmed.size} of ${SUBSCRIBERS} subscribers answered the warm-up`);
    await commit("warm-up");
    await new Promise((r) => setTimeout(r, 500));
  }
  await new Promise((r) => setTimeout(r, 1000)); // the last warm-ups drain
  arrivals.length = 0;
  const withSockets = await rssMiB(service.baseUrl);

  const cpuBefore = cpuSeconds([service.child.pid!]);
  const committed: string[] = [];
  const start = Date.now();
  for (let n = 0; n < EVENTS_PER_SECOND * SECONDS; n++) {
    const due = start + (n * 1000) / EVENTS_PER_SECOND;
    if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
    committed.push(...(await commit("bench")));
  }
  const expected = committed.length * SUBSCRIBERS;
  const drainDeadline = Date.now() + 30_000;
  while (arrivals.length < expected && Date.now() < drainDeadline) await new Promise((r) => setTimeout(r, 100));
  const cpu = cpuSeconds([service.child.pid!]) - cpuBefore;
  const duringLoad = await rssMiB(service.baseUrl);

  const wanted = new Set(committed);
  const pairs = new Set(arrivals.map((a) => `${a.client}:${a.eventId}`));
  const unknown = arrivals.filter((a) => !wanted.has(a.eventId)).length;
  const latencies = arrivals.map((a) => a.latencyMs).sort((a, b) => a - b);

  for (const client of clients) await client.dispose();
  await new Promise((r) => setTimeout(r, 15_000)); // sockets closed, V8's memory reducer has run
  const after = await rssMiB(service.baseUrl);

  console.log(
    `${SUBSCRIBERS} graphql-ws subscribers on \`events\`, ${EVENTS_PER_SECOND} events/s for ${SECONDS} s, one transaction each`,
  );
  console.log(
    `| events | deliveries expected | received | missing | repeated | p50 ms | p99 ms | max ms | service CPU ms per 1,000 deliveries | RSS MiB idle / ${SUBSCRIBERS} sockets / under load / after |`,
  );
  console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
  console.log(
    `| ${committed.length} | ${expected} | ${arrivals.length} | ${expected - pairs.size + unknown} | ${arrivals.length - pairs.size} | ${percentile(latencies, 50)} | ${percentile(latencies, 99)} | ${latencies.at(-1)} | ${((cpu * 1e6) / Math.max(1, arrivals.length)).toFixed(1)} | ${idle} / ${withSockets} / ${duringLoad} / ${after} |`,
  );

  await stop();
}
