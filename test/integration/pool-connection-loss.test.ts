// A connection lost while its client is checked out of a pool (the fan-out's, a migration's): the
// holder's query fails, and nothing else happens. pg emits the loss as an `error` event too, which,
// with no listener on the client (the pool listens on idle clients only), Node throws: the service
// would crash when Postgres restarts at the wrong moment.
import pg from "pg";
import { openDatabase, type Database } from "../../src/db/client.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";

let database: TestDatabase;
let db: Database;
let admin: pg.Client;

beforeAll(async () => {
  database = await createTestDatabase();
  db = openDatabase(database.url, database.options);
  admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
});
afterAll(async () => {
  await admin.end();
  await db.close();
  await database.drop();
});

it.each(["pool", "queuePool"] as const)(
  "a checked-out client of the %s losing its connection fails its query and throws nothing",
  async (which) => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on("uncaughtException", onUncaught);
    try {
      const client = await db[which].connect();
      const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      const ended = new Promise((resolve) => client.once("end", resolve));
      // Expected before the termination: its answer may come before the admin's.
      const failed = expect(client.query("SELECT pg_sleep(30)")).rejects.toThrow(/terminat/);
      await admin.query("SELECT pg_terminate_backend($1)", [rows[0]!.pid]);
      await failed;
      await ended;
      client.release(true);
      expect(uncaught).toEqual([]);
      // The pool goes on with a new connection.
      expect((await db[which].query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    } finally {
      process.off("uncaughtException", onUncaught);
    }
  },
);
