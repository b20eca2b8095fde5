// A VEX document is applied in the worker thread that read it, on a connection of its own
// (read-report-off-thread.ts, vex-transaction.ts). Its failures come back to the service's thread
// as errors the service tells apart as it does its own: a connection that fails is the database
// being unavailable (503), a foreign key violation the application being gone (404).
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { availableParallelism } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { isConnectionError } from "../../src/db/database-health.ts";
import { isForeignKeyViolation } from "../../src/db/client.ts";
import { readVexOffThread } from "../../src/scans/reports/read-report-off-thread.ts";
import { APPLY_CONNECTION_NAME } from "../../src/scans/reports/worker-connections.ts";
import { openVex, statement } from "../helpers/vex-documents.ts";
import { freePort } from "../helpers/service-process.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const document = (statements = 1) =>
  Buffer.from(
    JSON.stringify(
      openVex(Array.from({ length: statements }, (_, i) => statement(`CVE-2021-${44228 + i}`, "not_affected"))),
    ),
  );

async function applied(database: pg.Pool, applicationId: string, statements = 1) {
  const read = await readVexOffThread(document(statements), undefined, database);
  if (!read.ok) throw new Error(`not read: ${read.message}`);
  try {
    return await read.document.apply({ applicationId, by: "alice", at: new Date() });
  } finally {
    read.document.close();
  }
}

it("applies on its own connection, and keeps a statement that matches nothing yet", async () => {
  const app = (await t.request("POST", "/applications", { body: { name: "off-thread" } })).body.id as string;
  expect(await applied(t.app.db.pool, app)).toEqual({ applied: 0, unchanged: 0, pending: 1 });
  expect(await t.app.db.prisma.vexStatement.count({ where: { applicationId: app } })).toBe(1);
});

it("fails with a foreign key violation when the application is gone", async () => {
  const failure = await applied(t.app.db.pool, randomUUID()).catch((err: unknown) => err);
  expect(isForeignKeyViolation(failure)).toBe(true);
  expect(isConnectionError(failure)).toBe(false);
});

it("fails as a connection error when the database cannot be reached", async () => {
  const nowhere = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${await freePort()}/nowhere` });
  try {
    const failure = await applied(nowhere, randomUUID()).catch((err: unknown) => err);
    expect(isConnectionError(failure)).toBe(true);
    expect(isForeignKeyViolation(failure)).toBe(false);
  } finally {
    await nowhere.end();
  }
});

it("keeps its connection between applies, and closes it a few seconds after the last", async () => {
  const app = (await t.request("POST", "/applications", { body: { name: "warm-connection" } })).body.id as string;
  const backends = async () =>
    (
      await t.app.db.pool.query<{ pid: number; state: string }>(
        "SELECT pid, state FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()",
        [APPLY_CONNECTION_NAME],
      )
    ).rows;
  await applied(t.app.db.pool, app);
  const [first, ...others] = await backends();
  expect(others).toEqual([]);
  expect(first).toMatchObject({ state: "idle" });
  await applied(t.app.db.pool, app);
  expect(await backends()).toEqual([first]);
  await new Promise((resolve) => setTimeout(resolve, 6_000));
  expect(await backends()).toEqual([]);
}, 20_000);

it("applies while other processes of its session keep every core busy: a document thread gives way, and still moves", async () => {
  const app = (await t.request("POST", "/applications", { body: { name: "busy-machine" } })).body.id as string;
  await applied(t.app.db.pool, app); // the thread started, its code loaded, before the cores are taken
  // In this process's session, as `npm start`'s embedded Postgres is, at nice 0; each ends by
  // itself after a minute, should this process be killed before it kills them.
  const hogs = Array.from({ length: availableParallelism() }, () =>
    spawn(process.execPath, ["-e", "const end = Date.now() + 60_000; while (Date.now() < end);"], { stdio: "ignore" }),
  );
  try {
    await sleep(500);
    const started = performance.now();
    expect(await applied(t.app.db.pool, app, 2_000)).toEqual({ applied: 0, unchanged: 0, pending: 2_000 });
    // 0.46 s at nice 10 here, 12.5 s under SCHED_IDLE (background-priority.ts).
    expect(performance.now() - started).toBeLessThan(5_000);
  } finally {
    for (const hog of hogs) hog.kill("SIGKILL");
  }
});
