// The log's readers (the fan-out that hands events to live subscribers, the pages of GET /events and
// of replays) and the webhook claim have Postgres write each event's time (event-log.ts,
// occurredAtIso): it must come out as JavaScript's toISOString writes it, in UTC whatever the
// session's time zone.
import pg from "pg";
import { claimDeliveries } from "../../src/dispatcher/claim.ts";
import { fanOutBatch } from "../../src/dispatcher/fan-out.ts";
import { readHead, readLog } from "../../src/events/event-log.ts";
import { recordEvents } from "../../src/events/outbox.ts";
import { newId } from "../../src/ids.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { sampleEvent } from "../helpers/sample-events.ts";

let database: TestDatabase;
let pool: pg.Pool;
beforeAll(async () => {
  database = await createTestDatabase();
  // Three and a half hours behind UTC: an hour or a day taken from the session's zone shows.
  pool = new pg.Pool({ connectionString: database.url, options: "-c TimeZone=America/St_Johns" });
});
afterAll(async () => {
  await pool.end();
  await database.drop();
});

it("writes every event's time as toISOString does, in UTC, from the fan-out, the log's pages and the webhook claim", async () => {
  const times = [
    "1999-12-31T23:59:59.999Z",
    "2024-02-29T00:00:00.000Z",
    "2026-11-26T02:30:00.500Z",
    "2100-01-01T00:00:00.001Z",
  ];
  const before = await readHead(pool);
  await pool.query(
    `INSERT INTO webhooks (id, name, url, events, sealed_secret, created_at, updated_at) VALUES ($1, 'times', 'https://hooks.example.test/', '{scan.completed}', 'sealed', now(), now())`,
    [newId()],
  );
  const client = await pool.connect();
  try {
    await recordEvents(
      client,
      times.map((at, n) => ({ ...sampleEvent("scan.completed", newId(), n), occurredAt: new Date(at) })),
    );
  } finally {
    client.release();
  }

  const fannedOut = await fanOutBatch(pool, 100, true);
  expect(fannedOut.events.map((e) => e.timestamp)).toEqual(times);
  const page = await readLog(pool, { after: before, limit: 100, scanLimit: 100 });
  expect(page.events.map((e) => e.timestamp)).toEqual(times);
  const claimed = await claimDeliveries(pool, {
    owner: "times",
    leaseMs: 60_000,
    limit: 100,
    allowance: { webhookIds: [], available: [], backingOff: [] },
    defaultAllowance: 100,
  });
  expect(claimed.map((d) => d.occurredAt).sort()).toEqual(times);
});
