// fanOutPending (src/dispatcher/fan-out.ts) on a real database: every pending event fanned out in
// batches of FAN_OUT_BATCH, in log order, resting after each full batch as long as it took, and never
// after a batch that was not full: a live event is handed on without a rest. No batch runs while
// other bulk work of the process holds the turn (bulk-turns.ts).
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { FAN_OUT_BATCH, fanOutPending } from "../../src/dispatcher/fan-out.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { heldTurns } from "../helpers/held-turns.ts";
import { commitSampleEvents } from "../helpers/sample-events.ts";

let database: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  database = await createTestDatabase();
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
});
afterAll(async () => {
  await pool.end();
  await database.drop();
});

/**
 * Fans out what is pending on a clock that moves 5 ms each time it is read, so that every batch
 * "takes" 5 ms; what happened, in order.
 */
async function fanOutLogged(wanted = false) {
  let clock = 0;
  const log: string[] = [];
  const positions: number[] = [];
  const total = await fanOutPending(pool, {
    wanted: () => wanted,
    onBatch(fannedOut, events) {
      log.push(`batch ${fannedOut}`);
      positions.push(...events.map((e) => e.position));
    },
    rest: {
      now: () => (clock += 5),
      wait: async (ms) => {
        log.push(`rest ${ms}`);
      },
    },
  });
  return { total, log, positions };
}

it("fans out a backlog in full batches, resting after each as long as it took", async () => {
  await commitSampleEvents(pool, 2 * FAN_OUT_BATCH + 50);
  const { total, log, positions } = await fanOutLogged(true);
  expect(total).toBe(2 * FAN_OUT_BATCH + 50);
  expect(log).toEqual([`batch ${FAN_OUT_BATCH}`, "rest 5", `batch ${FAN_OUT_BATCH}`, "rest 5", "batch 50"]);
  // Every event once, in log order.
  expect(positions).toEqual(Array.from({ length: total }, (_, i) => positions[0]! + i));
});

it("hands a live event on without a rest", async () => {
  await commitSampleEvents(pool, 1);
  expect((await fanOutLogged()).log).toEqual(["batch 1"]);
  expect((await fanOutLogged()).log).toEqual(["batch 0"]);
});

it("rests before the empty batch that follows a full one: more may have been committed meanwhile", async () => {
  await commitSampleEvents(pool, FAN_OUT_BATCH);
  expect((await fanOutLogged()).log).toEqual([`batch ${FAN_OUT_BATCH}`, "rest 5", "batch 0"]);
});

it("waits for its turn while other bulk work of the process holds it", async () => {
  await commitSampleEvents(pool, 3);
  const { turns, release } = heldTurns();
  const fanningOut = fanOutPending(pool, { wanted: () => false, onBatch() {}, turns });
  await sleep(200);
  const pending = async () =>
    Number((await pool.query("SELECT count(*) FROM events WHERE fanned_out_at IS NULL")).rows[0].count);
  expect(await pending()).toBe(3);
  await release();
  expect(await fanningOut).toBe(3);
  expect(await pending()).toBe(0);
});
