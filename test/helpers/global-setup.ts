// One Postgres for the whole run: the server at DATABASE_URL when set, else an embedded one in a
// temporary directory. A migrated template database is made once; each test file clones it
// (test/helpers/database.ts), so files run in parallel without seeing each other's rows.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../../src/db/embedded.ts";
import { migrate } from "../../src/db/migrate.ts";
import { freePort, ROOT } from "./service-process.ts";

export default async function globalSetup() {
  // Tests that run the real process start dist/main.js, as `npm start` does: compile what changed
  // since the last build (about a second when nothing did).
  execFileSync("npm", ["run", "--silent", "build"], { cwd: ROOT, stdio: "inherit" });
  const run = randomBytes(4).toString("hex");
  let adminUrl: string;
  if (process.env.DATABASE_URL) {
    adminUrl = process.env.DATABASE_URL;
  } else {
    const embedded: EmbeddedDatabase = await startEmbeddedPostgres({
      dataDir: path.join(os.tmpdir(), `appsec-test-pg-${run}`),
      port: await freePort(),
      database: "postgres",
      persistent: false,
    });
    (globalThis as { __embeddedPg?: EmbeddedDatabase }).__embeddedPg = embedded;
    adminUrl = embedded.url;
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
}
