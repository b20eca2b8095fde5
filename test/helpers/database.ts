// A private, migrated database per test file, cloned from the run's template.
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

async function withAdmin<T>(work: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: process.env.TEST_ADMIN_DATABASE_URL });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}

/** How long a dropped database's own connections get to finish closing before they are cut. */
const CLOSING_MS = 2_000;

/**
 * Drops the database once the file's connections have gone. pg-pool's end() resolves once it has
 * asked its clients to end, not when they have: forced at once, the drop met a client still
 * closing, whose pool then had the server's "terminating connection" to throw (unhandled, the
 * file failed). A connection still there after CLOSING_MS is cut.
 */
async function dropDatabase(name: string): Promise<void> {
  await withAdmin(async (admin) => {
    const connected = async () =>
      (await admin.query("SELECT 1 FROM pg_stat_activity WHERE datname = $1", [name])).rowCount! > 0;
    for (const deadline = Date.now() + CLOSING_MS; Date.now() < deadline && (await connected());) await sleep(20);
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `appsec_test_${randomBytes(6).toString("hex")}`;
  await withAdmin((admin) => admin.query(`CREATE DATABASE "${name}" TEMPLATE "${process.env.TEST_TEMPLATE_DATABASE}"`));
  const url = new URL(process.env.TEST_ADMIN_DATABASE_URL!);
  url.pathname = `/${name}`;
  return { url: url.href, drop: () => dropDatabase(name) };
}
