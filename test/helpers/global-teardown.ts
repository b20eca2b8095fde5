import pg from "pg";
import type { EmbeddedDatabase } from "../../src/db/embedded.ts";

export default async function globalTeardown() {
  const embedded = (globalThis as { __embeddedPg?: EmbeddedDatabase }).__embeddedPg;
  if (embedded) return embedded.stop();
  const admin = new pg.Client({ connectionString: process.env.TEST_ADMIN_DATABASE_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${process.env.TEST_TEMPLATE_DATABASE}" WITH (FORCE)`);
  await admin.end();
}
