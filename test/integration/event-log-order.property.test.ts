// The event log has no gap (docs/spec/CONTRACT.md §14): concurrent writers with random transaction lengths, some
// held open for seconds, some rolled back, and two fan-outs numbering the log as two instances would,
// while a reader pages through it and now and then starts again from a cursor it was given earlier.
// Every committed event is read exactly once, never a rolled-back one, a transaction's events in the
// order it wrote them, and every event committed after the reader was handed a cursor comes after
// that cursor. fast-check draws the schedule; FUZZ_SEED=random draws a new one.
import fc from "fast-check";
import { openDatabase, type Database } from "../../src/db/client.ts";
import { fanOutEvents } from "../../src/dispatcher/fan-out.ts";
import { readEvents, readEventsJson, type EventLogQuery } from "../../src/domain/events/event-log.service.ts";
import type { ServiceContext } from "../../src/domain/context.ts";
import { decodeEventCursor, encodeEventCursor } from "../../src/events/event-log.ts";
import { recordEvents, type NewEvent } from "../../src/events/outbox.ts";
import { newId } from "../../src/ids.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { adminServiceContext } from "../helpers/service-context.ts";

const FIXED_SEED = 2311;
const seed =
  process.env.FUZZ_SEED === "random"
    ? Math.floor(Math.random() * 2 ** 31)
    : Number(process.env.FUZZ_SEED ?? FIXED_SEED);

let database: TestDatabase;
/** Two instances' worth of connections: each fans out on its own pool. */
let instances: Database[];
let ctx: ServiceContext;
beforeAll(async () => {
  database = await createTestDatabase();
  instances = [
    openDatabase(database.url, { ...database.options, max: 30 }),
    openDatabase(database.url, database.options),
  ];
  ctx = adminServiceContext(instances[0]!);
});
afterAll(async () => {
  await Promise.all(instances.map((db) => db.close()));
  await database.drop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Transaction {
  startAfterMs: number;
  events: number;
  /** How long it stays open after writing, before it commits (or rolls back). */
  holdMs: number;
  rollBack: boolean;
}

const transaction: fc.Arbitrary<Transaction> = fc.record({
  startAfterMs: fc.integer({ min: 0, max: 600 }),
  events: fc.integer({ min: 1, max: 6 }),
  holdMs: fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 0, max: 40 }) },
    { weight: 1, arbitrary: fc.integer({ min: 1000, max: 2500 }) },
  ),
  rollBack: fc.boolean().map((b) => b && Math.random() < 0.3),
});

/** What the reader does after each page: read on, or start again from a cursor it got earlier (an index into them). */
const readerStep = fc.oneof({ weight: 4, arbitrary: fc.constant<"on">("on") }, { weight: 1, arbitrary: fc.nat() });

interface Written {
  ids: string[];
  /** When its callback finished (COMMIT is sent after) and when the commit returned. */
  committing: number;
  committed: number;
  rolledBack: boolean;
}

async function write(db: Database, tx: Transaction, tag: string): Promise<Written> {
  await sleep(tx.startAfterMs);
  const events: NewEvent[] = Array.from({ length: tx.events }, (_, i) => ({
    type: "scan.started",
    data: {
      id: newId(),
      applicationId: tag,
      scanType: "sast",
      status: "running",
      triggeredBy: `${i}`,
      startedAt: null,
      completedAt: null,
      summary: null,
    },
    applicationId: tag,
  }));
  let ids: string[] = [];
  let committing = 0;
  const rolledBack = await db.prisma
    .$transaction(
      async (t) => {
        ids = await recordEvents(t, events);
        await sleep(tx.holdMs);
        if (tx.rollBack) throw new Error("rolled back");
        committing = Date.now();
      },
      { timeout: 10_000 },
    )
    .then(
      () => false,
      (err: Error) => (err.message === "rolled back" ? true : Promise.reject(err)),
    );
  return { ids, committing, committed: Date.now(), rolledBack };
}

it("gives a transaction held open while others commit its place after them, where a reader that went past them still finds it", async () => {
  const tag = newId();
  const db = instances[0]!;
  const scanStarted = (n: number): NewEvent => ({
    type: "scan.started",
    applicationId: tag,
    data: {
      id: newId(),
      applicationId: tag,
      scanType: "sast",
      status: "running",
      triggeredBy: `${n}`,
      startedAt: null,
      completedAt: null,
      summary: null,
    },
  });
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let longIds: string[] = [];
  // Writes first (its ids, its occurred_at and its transaction id all come before the others'), commits last.
  const long = db.prisma.$transaction(async (tx) => {
    longIds = await recordEvents(tx, [scanStarted(1)]);
    await held;
  });
  while (longIds.length === 0) await sleep(5);
  const shortIds = await db.prisma.$transaction((tx) => recordEvents(tx, [scanStarted(2)]));
  await fanOutEvents(db.queuePool, 500);
  const first = await readEvents(ctx, { applicationId: tag });
  expect(first.events.map((e) => e.eventId)).toEqual(shortIds);

  release();
  await long;
  await fanOutEvents(db.queuePool, 500);
  const next = await readEvents(ctx, { after: first.endCursor, applicationId: tag });
  expect(next.events.map((e) => e.eventId)).toEqual(longIds);
  // Ordered by when it was written, the held event would come first: before the cursor, skipped.
  expect(longIds[0]! < shortIds[0]!).toBe(true);
});

/** A page as GET /events sends it (its events written out by Postgres), in readEvents' terms. */
async function readRendered(ctx: ServiceContext, query: EventLogQuery) {
  const page = await readEventsJson(ctx, query);
  const views = JSON.parse(page.events.toString()) as { id: string; cursor: string }[];
  return { ...page, events: views.map((v) => ({ eventId: v.id, position: decodeEventCursor(v.cursor)! })) };
}

it("is read exactly once and in commit order, whatever transactions were in flight, from any cursor", async () => {
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(transaction, { minLength: 4, maxLength: 14 }),
      fc.array(readerStep, { minLength: 40, maxLength: 40 }),
      fc.integer({ min: 1, max: 7 }),
      async (transactions, steps, pageSize) => {
        runs++;
        const tag = newId(); // this run's events
        let writing = true;
        // Two fan-outs, as two instances run them, numbering whatever has committed.
        const fanOuts = instances.map(async (db) => {
          while (writing) {
            await fanOutEvents(db.queuePool, 3);
            await sleep(Math.random() * 15);
          }
          while ((await fanOutEvents(db.queuePool, 500)).length > 0);
        });
        const writers = Promise.all(transactions.map((tx) => write(instances[0]!, tx, tag)));

        /** The log as first read; a reader starting again from an earlier cursor must read the same. */
        const log: { id: string; position: number; cursor: string }[] = [];
        /** When the reader was handed a cursor, and where it stood. */
        const handed: { at: number; position: number }[] = [];
        let at = 0; // index in `log` of the next event the reader expects
        let after: string | undefined;
        let step = 0;
        const read = async (mayStartAgain: boolean): Promise<number> => {
          // Every other page read as GET /events reads it.
          const page = await (step % 2 === 0 ? readEvents : readRendered)(ctx, {
            after,
            applicationId: tag,
            limit: pageSize,
          });
          for (const e of page.events) {
            if (at < log.length) {
              if (log[at]!.id !== e.eventId)
                throw new Error(`read ${e.eventId} at ${at} after starting again, where ${log[at]!.id} was first read`);
            } else {
              if (log.some((seen) => seen.id === e.eventId)) throw new Error(`${e.eventId} read twice`);
              log.push({ id: e.eventId, position: e.position, cursor: encodeEventCursor(e.position) });
            }
            at++;
          }
          after = page.endCursor;
          handed.push({ at: Date.now(), position: decodeEventCursor(page.endCursor)! });
          const choice = steps[step++ % steps.length]!;
          if (mayStartAgain && choice !== "on" && log.length > 0) {
            // A client that kept the cursor of an event it read earlier starts again after it.
            const from = choice % log.length;
            after = log[from]!.cursor;
            at = from + 1;
          }
          return page.events.length;
        };
        const done = writers.then(() => (writing = false));
        while (writing) {
          await read(true);
          await sleep(5);
        }
        await done;
        await Promise.all(fanOuts);
        while ((await read(false)) > 0 || at < log.length);

        const written = await writers;
        const committed = written.filter((w) => !w.rolledBack);
        const rolledBack = new Set(written.filter((w) => w.rolledBack).flatMap((w) => w.ids));
        const position = new Map(log.map((e) => [e.id, e.position]));
        expect(log.filter((e) => rolledBack.has(e.id))).toEqual([]);
        expect(log).toHaveLength(committed.reduce((n, w) => n + w.ids.length, 0));
        for (const w of committed) {
          const places = w.ids.map((id) => position.get(id));
          expect(places.every((p) => p !== undefined)).toBe(true);
          expect([...places].sort((a, b) => a! - b!)).toEqual(places); // in the order written
        }
        // The contract: an event committed after a reader saw cursor C sorts after C.
        for (const w of committed) {
          for (const seen of handed)
            if (seen.at < w.committing) expect(position.get(w.ids[0]!)!).toBeGreaterThan(seen.position);
        }
        expect(handed.length).toBeGreaterThan(transactions.length);
      },
    ),
    { numRuns: 6, seed, endOnFailure: true },
  );
  expect(runs).toBe(6);
}, 180_000);
