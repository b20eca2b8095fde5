// A private, migrated database per test file, cloned from the run's template. With TEST_POOLER set
// (the pooler project sets it to `pgbouncer`: npm run test:pooler), the run's PgBouncer in
// transaction mode stands in front of it (global-setup/steps.ts): the service's DATABASE_URL goes
// through it, its DATABASE_DIRECT_URL to the server, as in production behind a pooler.
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import type { DatabaseOptions } from "../../src/db/client.ts";

export interface TestDatabase {
  /** The service's DATABASE_URL: through the run's pooler when there is one. */
  url: string;
  /** The server itself: a session of its own (what DATABASE_DIRECT_URL names behind a pooler). */
  directUrl: string;
  /** The service's database settings for it: DATABASE_URL and, behind a pooler, DATABASE_DIRECT_URL and DATABASE_POOL_MODE. */
  env: Record<string, string>;
  /** The same for a test's own `openDatabase(url, options)`. */
  options: DatabaseOptions;
  drop(): Promise<void>;
}

async function withAdmin<T>(
  work: (admin: pg.Client) => Promise<T>,
  url = process.env.TEST_ADMIN_DATABASE_URL,
): Promise<T> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}

/** The run's pooler's address for `url`'s database, when the run has one. */
function pooled(url: URL): URL | undefined {
  const port = process.env.TEST_POOLER_PORT;
  if (!port) return undefined;
  const through = new URL(url);
  through.host = `127.0.0.1:${port}`;
  return through;
}

/** A command on the run's pooler's admin console (SHOW STATS, KILL…); undefined without a pooler. */
export async function poolerAdmin<Row extends object>(command: string): Promise<Row[] | undefined> {
  const admin = pooled(new URL(process.env.TEST_ADMIN_DATABASE_URL!));
  if (!admin) return undefined;
  admin.pathname = "/pgbouncer";
  return withAdmin(async (client) => (await client.query<Row>(command)).rows, admin.href);
}

/** The transactions the run's pooler has passed to `database` so far (its SHOW STATS). */
export async function poolerTransactions(database: TestDatabase): Promise<number> {
  const name = new URL(database.url).pathname.slice(1);
  const rows = await poolerAdmin<{ database: string; total_xact_count: string }>("SHOW STATS");
  if (!rows) throw new Error("no pooler: run this project with npm run test:pooler");
  return Number(rows.find((r) => r.database === name)?.total_xact_count ?? 0);
}

/** How long a dropped database's own connections get to finish closing before they are cut. */
const CLOSING_MS = 2_000;

/**
 * Drops the database once the file's connections have gone. pg-pool's end() resolves once it has
 * asked its clients to end, not when they have: forced at once, the drop met a client still
 * closing, whose pool then had the server's "terminating connection" to throw (unhandled, the
 * file failed). A connection still there after CLOSING_MS is cut. The pooler's own connections to
 * it, kept idle for other clients, are closed first (its admin console's KILL).
 */
async function dropDatabase(name: string): Promise<void> {
  await poolerAdmin(`KILL "${name}"`);
  await withAdmin(async (admin) => {
    const connected = async () =>
      (await admin.query("SELECT 1 FROM pg_stat_activity WHERE datname = $1", [name])).rowCount! > 0;
    for (const deadline = Date.now() + CLOSING_MS; Date.now() < deadline && (await connected());) await sleep(20);
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });
}

/** `migrated: false`: an empty database, for the service's own migrations at start-up. */
export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const name = `appsec_test_${randomBytes(6).toString("hex")}`;
  const template = options.migrated === false ? "template0" : process.env.TEST_TEMPLATE_DATABASE;
  await withAdmin((admin) => admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
  const direct = new URL(process.env.TEST_ADMIN_DATABASE_URL!);
  direct.pathname = `/${name}`;
  const through = pooled(direct);
  const url = (through ?? direct).href;
  return {
    url,
    directUrl: direct.href,
    env: through
      ? { DATABASE_URL: url, DATABASE_DIRECT_URL: direct.href, DATABASE_POOL_MODE: "transaction" }
      : { DATABASE_URL: url },
    options: through ? { poolMode: "transaction", directUrl: direct.href } : {},
    drop: () => dropDatabase(name),
  };
}
