// A replay (a subscription resuming after a cursor) reads the log a page at a time and hands its
// events on one by one. It lets go of each event as soon as it is handed on: a page held whole while
// its events are handed on outlives the young generation's collections, and everything it holds is
// then promoted, to be reclaimed by mark-compact collections, whose pauses the live subscribers wait
// through (bench/notes/2026-11-26-event-log-replay.md).
import v8 from "node:v8";
import vm from "node:vm";
import { openDatabase, type Database } from "../../src/db/client.ts";
import { fanOutEvents } from "../../src/dispatcher/fan-out.ts";
import type { ServiceContext } from "../../src/domain/context.ts";
import { openReplay } from "../../src/domain/events/event-log.service.ts";
import { encodeEventCursor, readHead } from "../../src/events/event-log.ts";
import { recordEvents } from "../../src/events/outbox.ts";
import { newId } from "../../src/ids.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { sampleEvent } from "../helpers/sample-events.ts";
import { adminServiceContext } from "../helpers/service-context.ts";

v8.setFlagsFromString("--expose-gc");
const collectGarbage = vm.runInNewContext("gc") as () => void;

let database: TestDatabase;
let db: Database;
let ctx: ServiceContext;
beforeAll(async () => {
  database = await createTestDatabase();
  db = openDatabase(database.url, database.options);
  ctx = adminServiceContext(db);
});
afterAll(async () => {
  await db.close();
  await database.drop();
});

it("lets go of each event once it is handed on, while the rest of its page is still to come", async () => {
  const before = await readHead(db.pool);
  const ids = await db.prisma.$transaction((tx) =>
    recordEvents(
      tx,
      Array.from({ length: 20 }, (_, n) => sampleEvent("scan.completed", newId(), n)),
    ),
  );
  await fanOutEvents(db.pool, 100);

  const replay = await openReplay(ctx, { types: ["scan.completed"] }, encodeEventCursor(before), () => true);
  const handed: WeakRef<object>[] = [];
  const received: string[] = [];
  for (let n = 0; n < 10; n++) {
    const step = await replay.next();
    received.push(step.value!.eventId);
    handed.push(new WeakRef(step.value!));
  }
  // A WeakRef holds its target until the current job ends: collect on a later turn of the loop.
  await new Promise((resolve) => setImmediate(resolve));
  collectGarbage();
  expect(received).toEqual(ids.slice(0, 10));
  // The one handed last is still the generator's current value; those before it are gone.
  expect(handed.slice(0, 9).filter((ref) => ref.deref() !== undefined)).toHaveLength(0);

  const rest: string[] = [];
  for await (const event of replay) rest.push(event.eventId);
  expect(rest).toEqual(ids.slice(10));
});
