// The service's connections keep their backends' working memory mapped (db/backend-memory.ts): a
// statement whose result is a few hundred KB, run again and again, does not fault its pages in anew
// each time, as it does on a connection opened without the first statement. Counted from the
// backend's own /proc entry: the tests' Postgres runs on this machine.
import pg from "pg";
import { openDatabase, type Database } from "../../src/db/client.ts";
import { addressOf } from "../../src/db/pool-mode.ts";
import { withConnection } from "../../src/scans/reports/worker-connections.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { procStatField } from "../helpers/proc-stat.ts";

/** About 330 KB of text built in one value, as a page of the event log is. */
const LARGE_RESULT = "SELECT string_agg(md5(i::text), ',') AS page FROM generate_series(1, 10000) AS i";
const RUNS = 10;

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

/** A process's minor page faults so far: minflt, field 10 of its stat line. */
const minorFaults = (pid: number): number => procStatField(`/proc/${pid}/stat`, 10);

/** Page faults of `client`'s backend per run of LARGE_RESULT, once its caches are warm. */
async function faultsPerRun(client: pg.ClientBase): Promise<number> {
  const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
  for (let i = 0; i < 3; i++) await client.query(LARGE_RESULT);
  const before = minorFaults(rows[0]!.pid);
  for (let i = 0; i < RUNS; i++)
    expect((await client.query<{ page: string }>(LARGE_RESULT)).rows[0]!.page.length).toBeGreaterThan(300_000);
  return (minorFaults(rows[0]!.pid) - before) / RUNS;
}

it("a connection opened plainly faults the result's pages in on every run", async () => {
  const plain = new pg.Client({ connectionString: database.url });
  await plain.connect();
  try {
    expect(await faultsPerRun(plain)).toBeGreaterThan(50);
  } finally {
    await plain.end();
  }
});

it.each(["pool", "queuePool"] as const)("a new connection of the %s keeps them mapped", async (which) => {
  const client = await db[which].connect();
  try {
    expect(await faultsPerRun(client)).toBeLessThan(10);
  } finally {
    client.release();
  }
});

it("the connection a document thread applies VEX documents on keeps them mapped", async () => {
  expect(await withConnection(addressOf(db.pool), faultsPerRun)).toBeLessThan(10);
});
