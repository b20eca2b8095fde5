// A fresh database for one benchmark run: a new database on DATABASE_URL's server, or on an
// embedded Postgres started for the run.
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { startEmbeddedPostgres } from "../src/db/embedded.ts";

export async function benchDatabase(): Promise<{ url: string; stop(): Promise<void> }> {
  const name = `appsec_bench_${Date.now()}`;
  let adminUrl = process.env.DATABASE_URL;
  let embedded: Awaited<ReturnType<typeof startEmbeddedPostgres>> | undefined;
  if (!adminUrl) {
    embedded = await startEmbeddedPostgres({
      dataDir: path.join(os.tmpdir(), name),
      port: 54399,
      database: "postgres",
      persistent: false,
    });
    adminUrl = embedded.url;
  }
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    async stop() {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
      await embedded?.stop();
    },
  };
}

/** Another fresh database on the server of `url` (a run comparing services side by side); `suffix` tells several apart. */
export async function siblingDatabase(url: string, suffix = "b"): Promise<{ url: string; stop(): Promise<void> }> {
  const name = `appsec_bench_${Date.now()}_${suffix}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const sibling = new URL(url);
  sibling.pathname = `/${name}`;
  return {
    url: sibling.href,
    async stop() {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    },
  };
}
