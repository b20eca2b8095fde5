// The service's pools keep the connections a burst opened (db/client.ts): pg-pool closes an idle
// client after 10 s unless told not to, and the next burst then waited for new backends to start and
// warm up. Three connections checked out at once, let go, and checked out again after a quiet spell
// longer than that default are the same three backends.
import { openDatabase, type Database } from "../../src/db/client.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";

/** Longer than pg-pool's default idle timeout (10 s). */
const QUIET_MS = 11_000;

let database: TestDatabase;
let db: Database;

beforeAll(async () => {
  database = await createTestDatabase();
  db = openDatabase(database.url, database.options);
});
afterAll(async () => {
  await db.close();
  await database.drop();
});

/** The backend pids of three clients of `pool` checked out at once, then released. */
async function burst(pool: Database["pool"]): Promise<number[]> {
  const clients = await Promise.all([pool.connect(), pool.connect(), pool.connect()]);
  try {
    const pids = await Promise.all(
      clients.map(
        async (client) => (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid,
      ),
    );
    return pids.sort((a, b) => a - b);
  } finally {
    for (const client of clients) client.release();
  }
}

it(
  "the pool and the queue pool keep the connections of a burst through a quiet spell",
  async () => {
    const first = await Promise.all([burst(db.pool), burst(db.queuePool)]);
    expect(new Set(first.flat()).size).toBe(6);
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
    expect([db.pool.totalCount, db.queuePool.totalCount]).toEqual([3, 3]);
    expect(await Promise.all([burst(db.pool), burst(db.queuePool)])).toEqual(first);
  },
  QUIET_MS + 10_000,
);
