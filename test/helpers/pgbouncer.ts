// Debian's PgBouncer in transaction mode in front of a Postgres, as production sets it up
// (docs/operators/pooler.md): every database of that server through one listener, any number of
// client connections over `poolSize` server connections per database. Started as a reaped child
// (process-reaper.ts); as the postgres user when this process is root, since PgBouncer refuses to
// run as root.
import { mkdtempSync, rmSync, writeFileSync, chmodSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { spawnReaped } from "./process-reaper.ts";
import { requireTool } from "./required-tool.ts";
import { freePort } from "./service-process.ts";

export const PGBOUNCER = "/usr/sbin/pgbouncer";

export interface PgBouncer {
  port: number;
  /** `directUrl` (a URL of the server behind) with PgBouncer's address instead. */
  pooled(directUrl: string): string;
  /** Runs a command on PgBouncer's admin console (SHOW POOLS, SHOW STATS…). */
  admin<Row extends object>(command: string): Promise<Row[]>;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  /** Server connections per database and user (default_pool_size). */
  poolSize?: number;
}

export async function startPgBouncer(serverUrl: string, options: PgBouncerOptions = {}): Promise<PgBouncer> {
  requireTool(PGBOUNCER, "pgbouncer");
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username);
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), "appsec-pgbouncer-"));
  chmodSync(dir, 0o755);
  const config = path.join(dir, "pgbouncer.ini");
  writeFileSync(
    path.join(dir, "users.txt"),
    `"${user}" "${decodeURIComponent(server.password)}"\n`, // the password PgBouncer logs in to the server with
  );
  writeFileSync(
    config,
    [
      "[databases]",
      `* = host=${server.hostname} port=${server.port || 5432}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${path.join(dir, "users.txt")}`,
      `admin_users = ${user}`,
      "pool_mode = transaction",
      `default_pool_size = ${options.poolSize ?? 20}`,
      "max_client_conn = 2000",
      // Server connections of a test database dropped with FORCE are gone: not kept to fail later.
      "server_idle_timeout = 5",
      "server_check_delay = 0",
      "log_connections = 0",
      "log_disconnections = 0",
      "",
    ].join("\n"),
  );
  chmodSync(config, 0o644);
  chmodSync(path.join(dir, "users.txt"), 0o644);
  const asUser = process.getuid?.() === 0 ? ["-u", "postgres"] : [];
  let output = "";
  const child = spawnReaped(PGBOUNCER, [...asUser, config], { stdio: ["ignore", "pipe", "pipe"] });
  for (const stream of [child.stdout!, child.stderr!]) stream.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  const adminUrl = new URL(serverUrl);
  adminUrl.host = `127.0.0.1:${port}`;
  adminUrl.pathname = "/pgbouncer";
  const admin = async <Row extends object>(command: string): Promise<Row[]> => {
    // The admin console speaks the simple protocol only: a query without values is sent by it.
    const client = new pg.Client({ connectionString: adminUrl.href });
    await client.connect();
    try {
      return (await client.query<Row>(command)).rows;
    } finally {
      await client.end();
    }
  };
  for (const deadline = Date.now() + 10_000; ; await sleep(50)) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited at start:\n${output}`);
    try {
      await admin("SHOW VERSION");
      break;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`pgbouncer did not start: ${String(err)}\n${output}`);
    }
  }
  return {
    port,
    pooled(directUrl) {
      const url = new URL(directUrl);
      url.host = `127.0.0.1:${port}`;
      return url.href;
    },
    admin,
    async stop() {
      child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
