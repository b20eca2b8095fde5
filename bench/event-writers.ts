// The writers of bench/events.ts while it reads GET /events, in a worker thread of their own: every
// 100 ms, 10 transactions of 10 events each (`rate` events/s in all), through the outbox's statement
// on a pool of this thread. On the thread that times the reads, their round trips and Prisma's
// transactions held its event loop (the bare statement's p90 was 17–22 ms there, for a statement of
// 3–5 ms), and that wait was counted as the service's (bench/notes/2026-11-27-get-events-pages.md).
// Posts "ready"; told "stop", it lets the transactions under way commit and posts how many events
// it committed.
import { parentPort, workerData } from "node:worker_threads";
import pg from "pg";
import { recordEvents } from "../src/events/outbox.ts";
import { scanEvent } from "./sample-scan-event.ts";

const { url, rate } = workerData as { url: string; rate: number };
const pool = new pg.Pool({ connectionString: url, max: 10 });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function commitTen(first: number): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await recordEvents(
      client,
      Array.from({ length: 10 }, (_, i) => scanEvent(`write-${first + i}`)),
    );
    await client.query("COMMIT");
  } finally {
    client.release();
  }
}

let writing = true;
parentPort!.once("message", () => (writing = false));
parentPort!.postMessage("ready");
let written = 0;
const started = Date.now();
while (writing) {
  const due = started + (written / rate) * 1000;
  if (due > Date.now()) await sleep(due - Date.now());
  await Promise.all(Array.from({ length: 10 }, (_, t) => commitTen(written + t * 10)));
  written += 100;
}
parentPort!.postMessage({ written, seconds: (Date.now() - started) / 1000 });
await pool.end();
