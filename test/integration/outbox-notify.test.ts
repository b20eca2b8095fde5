// The outbox wakes listeners once per committing transaction, however many events it records; the
// fan-out numbers a transaction's events into the event log in the order they happened, and the live
// feed reads them from there, a page at a time.
import pg from "pg";
import { openDatabase, type Database } from "../../src/db/client.ts";
import type { EventEnvelope } from "../../src/events/catalog.ts";
import { EVENTS_CHANNEL, recordEvent, recordEvents, type NewEvent } from "../../src/events/outbox.ts";
import { fanOutBatch, fanOutEvents } from "../../src/dispatcher/fan-out.ts";
import { createEventFeed } from "../../src/events/event-feed.ts";
import { newId } from "../../src/ids.ts";
import { createLogger } from "../../src/log.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { eventually } from "../helpers/scan-engines.ts";

let database: TestDatabase;
let db: Database;
let listener: pg.Client;
const notifications: pg.Notification[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  db = openDatabase(database.url, database.options);
  listener = new pg.Client({ connectionString: database.directUrl }); // LISTEN lasts the session
  await listener.connect();
  listener.on("notification", (msg) => notifications.push(msg));
  await listener.query(`LISTEN ${EVENTS_CHANNEL}`);
});
afterAll(async () => {
  await listener.end();
  await db.close();
  await database.drop();
});
beforeEach(() => {
  notifications.length = 0;
});

const created = (title: string): NewEvent => ({
  type: "vulnerability.created",
  data: { id: newId(), severity: "high", applicationId: newId(), title, createdAt: new Date().toISOString() },
});

const txIdOf = async (eventId: string) =>
  (await db.pool.query<{ tx_id: string }>("SELECT tx_id::text FROM events WHERE id = $1", [eventId])).rows[0]!.tx_id;

/** Commits a marker transaction and waits for its notification: any earlier one's is in by then. Returns its tx id. */
async function settle(): Promise<string> {
  const [marker] = await db.prisma.$transaction((tx) => recordEvents(tx, [created("marker")]));
  const txId = await txIdOf(marker!);
  await eventually(async () => notifications.some((n) => n.payload === txId), 5000);
  return txId;
}

it("sends one NOTIFY per committing transaction, carrying its id, whatever the number of events", async () => {
  const ids = await db.prisma.$transaction(async (tx) => [
    ...(await recordEvents(
      tx,
      Array.from({ length: 300 }, (_, i) => created(`first ${i}`)),
    )),
    ...(await recordEvents(
      tx,
      Array.from({ length: 200 }, (_, i) => created(`second ${i}`)),
    )),
    await recordEvent(tx, "policy.violated", {
      policyId: newId(),
      policyName: "p",
      action: "block",
      applicationId: newId(),
      scanId: newId(),
      vulnerabilityIds: [],
    }),
  ]);
  const markerTxId = await settle();

  const { rows } = await db.pool.query<{ tx_id: string; n: number }>(
    "SELECT tx_id::text, count(*)::int AS n FROM events WHERE id = ANY($1::uuid[]) GROUP BY tx_id",
    [ids],
  );
  expect(rows.map((r) => r.n)).toEqual([ids.length]); // every event, all of one transaction
  const txIds = new Set(rows.map((r) => r.tx_id));
  expect(notifications.map((n) => n.payload)).toEqual([...txIds, markerTxId]);
});

it("sends nothing for a rolled-back transaction", async () => {
  await expect(
    db.prisma.$transaction(async (tx) => {
      await recordEvents(tx, [created("rolled back")]);
      throw new Error("roll back");
    }),
  ).rejects.toThrow("roll back");
  await settle();
  expect(notifications).toHaveLength(1); // the marker's
});

const fanOutAll = async () => {
  while ((await fanOutEvents(db.queuePool, 500)).length > 0);
};

/**
 * A live feed on the test's database, subscribed once every event so far is in the log: `received`
 * resolves with the next `count` events it delivers.
 */
async function liveFeed(count: number) {
  await fanOutAll(); // the other tests' events: in the log before this subscriber starts
  const bus = createEventFeed({ listenOn: db.listenOn, pool: db.pool, log: createLogger("silent") }).bus;
  const stream = await bus.subscribe();
  const received = (async () => {
    const events: EventEnvelope[] = [];
    for await (const event of stream) {
      events.push(event);
      if (events.length === count) break;
    }
    return events;
  })();
  return { received, close: () => bus.close() };
}

it("feeds live subscribers every event of a large transaction, in the order they happened, over several pages", async () => {
  const feed = await liveFeed(2_500);
  try {
    const ids = await db.prisma.$transaction((tx) =>
      recordEvents(
        tx,
        Array.from({ length: 2_500 }, (_, i) => created(`live ${i}`)),
      ),
    );
    await fanOutAll();
    const received = await feed.received;
    expect(received.map((e) => e.eventId)).toEqual(ids);
    expect(received.map((e) => (e.data as { title: string }).title)).toEqual(ids.map((_, i) => `live ${i}`));
  } finally {
    await feed.close();
  }
});

it("fans out without reading the events back when no one here wants them; live subscribers still get each from the log", async () => {
  const feed = await liveFeed(600);
  try {
    const ids = await db.prisma.$transaction((tx) =>
      recordEvents(
        tx,
        Array.from({ length: 600 }, (_, i) => created(`counted ${i}`)),
      ),
    );
    const batches: { fannedOut: number; events: unknown[] }[] = [];
    for (
      let batch = await fanOutBatch(db.queuePool, 500, false);
      batch.fannedOut > 0;
      batch = await fanOutBatch(db.queuePool, 500, false)
    )
      batches.push(batch);
    expect(batches).toEqual([
      { fannedOut: 500, events: [] },
      { fannedOut: 100, events: [] },
    ]);
    // Numbered into the log, and the log's NOTIFY sent: the bus read them from there.
    expect((await feed.received).map((e) => e.eventId)).toEqual(ids);
  } finally {
    await feed.close();
  }
});
