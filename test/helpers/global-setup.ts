// One Postgres for the whole run: the server at DATABASE_URL when set, else an embedded one in a
// temporary directory. A migrated template database is made once; each test file clones it
// (test/helpers/database.ts), so files run in parallel without seeing each other's rows.
import { randomBytes } from "node:crypto";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../../src/db/embedded.ts";
import { migrate } from "../../src/db/migrate.ts";
import { freePort } from "./service-process.ts";

export default async function globalSetup() {
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
