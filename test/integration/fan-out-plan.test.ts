// A fan-out's cost does not grow with the events fanned out before it. Each one leaves a dead entry
// in the pending index until VACUUM; the fan-out reads its batch with a plain index scan, which marks
// those entries dead as it passes them, so later fan-outs skip them without visiting the table
// (a bitmap or sequential scan would visit it for every one, every time). The plan is cached by the
// database function, so it must be the same whatever the statistics said when it was made; here the
// session's own settings stand in for statistics that make the other scans look cheaper: index scans
// are off for it.
import pg from "pg";
import { fanOutBatch } from "../../src/dispatcher/fan-out.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { untilOlderTransactionsEnd } from "../helpers/older-transactions.ts";
import { commitSampleEvents } from "../helpers/sample-events.ts";

let database: TestDatabase;
/** One connection, so that the counters are all one backend's; planning as the dispatcher's do (src/db/client.ts), without index scans. */
let pool: pg.Pool;

beforeAll(async () => {
  database = await createTestDatabase();
  pool = new pg.Pool({
    connectionString: database.url,
    max: 1,
    options: "-c plan_cache_mode=force_custom_plan -c enable_indexscan=off",
  });
});
afterAll(async () => {
  await pool.end();
  await database.drop();
});

/** Blocks of the events table this backend has read so far. */
async function eventBlocksRead(): Promise<number> {
  // Counters reach the shared statistics when the backend goes idle, at most once a second unless forced.
  await pool.query("SELECT pg_stat_force_next_flush()");
  await pool.query("SELECT 1");
  const { rows } = await pool.query<{ blocks: string }>(
    "SELECT heap_blks_hit + heap_blks_read AS blocks FROM pg_statio_user_tables WHERE relname = 'events'",
  );
  return Number(rows[0]!.blocks);
}

/** Fans out everything pending, in batches of 500; returns how many. */
async function fanOutAll(): Promise<number> {
  let total = 0;
  for (let batch = 500; batch === 500; total += batch) batch = (await fanOutBatch(pool, 500, false)).fannedOut;
  return total;
}

it("reads a batch of one without visiting the events fanned out before it", async () => {
  await commitSampleEvents(pool, 5_000);
  expect(await fanOutAll()).toBe(5_000);
  await untilOlderTransactionsEnd(pool);

  const blocksRead: number[] = [];
  for (let i = 0; i < 4; i++) {
    await commitSampleEvents(pool, 1);
    const before = await eventBlocksRead();
    expect((await fanOutBatch(pool, 500, false)).fannedOut).toBe(1);
    blocksRead.push((await eventBlocksRead()) - before);
  }
  // The first fan-out after them may still visit the events to find them dead; none after it does.
  for (const blocks of blocksRead.slice(1)) expect(blocks).toBeLessThan(10);
}, 60_000);
