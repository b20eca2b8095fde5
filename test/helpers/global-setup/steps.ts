// The set-up steps the jest projects share (jest.config.js). Every project's globalSetup runs in
// jest's own process before any test, so a step two projects need is done once: the state lives
// on that process's globalThis, and the variables set here reach the test workers started later.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../../../src/db/embedded.ts";
import { migrate } from "../../../src/db/migrate.ts";
import { startPgBouncer, type PgBouncer } from "../pgbouncer.ts";
import { reapProcess } from "../process-reaper.ts";
import { freePort, ROOT } from "../service-process.ts";

interface SetupState {
  built: Set<"all" | "console">;
  database?: Promise<void>;
  embedded?: EmbeddedDatabase;
  pooler?: PgBouncer;
  forgetPostmaster?: () => void;
}
const state: SetupState = ((globalThis as { __appsecTestSetup?: SetupState }).__appsecTestSetup ??= {
  built: new Set(),
});

/** `npm run build`: what dist/main.js and dist/agent/main.js run; compiles only what changed (about a second when nothing did). */
export function buildAll(): void {
  if (state.built.has("all")) return;
  execFileSync("npm", ["run", "--silent", "build"], { cwd: ROOT, stdio: "inherit" });
  state.built.add("all").add("console");
}

/** The console's part of the build only (dist/console, which the in-process service serves). */
export function buildConsole(): void {
  if (state.built.has("console")) return;
  execFileSync(process.execPath, ["--import", "tsx", "console/build.ts"], { cwd: ROOT, stdio: "inherit" });
  state.built.add("console");
}

/**
 * One Postgres for the whole run: the server at DATABASE_URL when set, else an embedded one in a
 * temporary directory. A migrated template database is made once; each test file clones it
 * (test/helpers/database.ts), so files run in parallel without seeing each other's rows. With
 * TEST_POOLER=pgbouncer, Debian's PgBouncer in transaction mode stands in front of it.
 */
export function testDatabase(): Promise<void> {
  return (state.database ??= makeTemplate());
}

async function makeTemplate(): Promise<void> {
  const run = randomBytes(4).toString("hex");
  let adminUrl: string;
  if (process.env.DATABASE_URL) {
    adminUrl = process.env.DATABASE_URL;
  } else {
    const dataDir = path.join(os.tmpdir(), `appsec-test-pg-${run}`);
    const embedded = await startEmbeddedPostgres({
      dataDir,
      port: await freePort(),
      database: "postgres",
      persistent: false,
    });
    state.embedded = embedded;
    adminUrl = embedded.url;
    // Started by this process, not by a test, but no more allowed to outlive the run.
    state.forgetPostmaster = reapProcess(
      Number(readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]),
    );
  }

  const template = `appsec_test_tpl_${run}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${template}"`);
  await admin.end();

  const templateUrl = new URL(adminUrl);
  templateUrl.pathname = `/${template}`;
  const pool = new pg.Pool({ connectionString: templateUrl.href, max: 1 });
  await migrate(pool);
  await pool.end();

  process.env.TEST_ADMIN_DATABASE_URL = adminUrl;
  process.env.TEST_TEMPLATE_DATABASE = template;
  await startPooler(adminUrl);
}

async function startPooler(serverUrl: string): Promise<void> {
  const pooler = process.env.TEST_POOLER;
  if (!pooler) return;
  if (pooler !== "pgbouncer") throw new Error(`TEST_POOLER=${pooler}: the only pooler the tests know is pgbouncer`);
  state.pooler = await startPgBouncer(serverUrl);
  process.env.TEST_POOLER_PORT = String(state.pooler.port);
  process.stderr.write(`database: through PgBouncer in transaction mode (port ${state.pooler.port})\n`);
}

/** Undoes testDatabase(): the embedded server stopped (its directory removed), or the template dropped. */
export async function dropTestDatabase(): Promise<void> {
  if (!state.database) return;
  await state.database;
  state.database = undefined;
  await state.pooler?.stop();
  state.pooler = undefined;
  if (state.embedded) {
    await state.embedded.stop();
    state.forgetPostmaster?.();
    return;
  }
  const admin = new pg.Client({ connectionString: process.env.TEST_ADMIN_DATABASE_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${process.env.TEST_TEMPLATE_DATABASE}" WITH (FORCE)`);
  await admin.end();
}
