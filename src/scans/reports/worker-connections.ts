// The connection a document thread applies its VEX documents on (report-worker.ts), kept between
// applies instead of opened for each: a new backend's first statements cost more than a warm one's
// (its caches of the tables, indexes and types they use), 30–70 ms a statement for the apply's
// (bench/notes/2026-11-27-vex-warm-thread.md). One per database URL and thread: a thread runs one
// task at a time.
import type pg from "pg";
import { keepBackendMemoryMapped } from "../../db/backend-memory.ts";
import { createPool, type DatabaseAddress } from "../../db/pool-mode.ts";

/** As the service's own connections (src/db/client.ts): a database that does not answer fails the apply. */
const CONNECTION_TIMEOUT_MS = 3000;
/** Closed this long after the last apply: a thread may stay for long after (read-report-off-thread.ts), its connection need not. */
const IDLE_MS = 5000;
/** What pg_stat_activity calls it. */
export const APPLY_CONNECTION_NAME = "appsec-vex-apply";

const pools = new Map<string, pg.Pool>();

/** Runs `use` on the thread's connection to `database`; a connection whose use failed is closed, not kept. */
export async function withConnection<T>(
  database: DatabaseAddress,
  use: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  let pool = pools.get(database.url);
  if (!pool) {
    pool = createPool(
      {
        connectionString: database.url,
        application_name: APPLY_CONNECTION_NAME,
        max: 1,
        idleTimeoutMillis: IDLE_MS,
        connectionTimeoutMillis: CONNECTION_TIMEOUT_MS,
        onConnect: keepBackendMemoryMapped,
      },
      database.poolMode,
    );
    pool.on("error", () => {}); // a kept connection lost while idle: the pool drops it, the next apply opens another
    pools.set(database.url, pool);
  }
  const client = await pool.connect();
  const ignore = () => {}; // a connection lost mid-apply also fails the query in flight, which answers
  client.on("error", ignore);
  let failed = false;
  try {
    return await use(client);
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    client.off("error", ignore);
    client.release(failed);
  }
}
