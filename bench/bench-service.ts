// The service as the suites that talk to one instance start it: its own process (dist/main.js with
// npm start's flags and BENCH_SERVICE_FLAGS; a CPU profile into BENCH_CPU_PROF_DIR when set),
// NODE_ENV=production, on a fresh database; with a connection of the bench's own and an admin token.
import { randomBytes } from "node:crypto";
import { mintToken } from "../src/auth/mint-token.ts";
import { openDatabase, type Database } from "../src/db/client.ts";
import { startServiceProcess, type ServiceProcess } from "../test/helpers/service-process.ts";
import { benchDatabase } from "./database.ts";
import { extraServiceFlags } from "./service-flags.ts";

const SECRET = "bench-secret-bench-secret-bench-secret-00";

export interface BenchService {
  service: ServiceProcess;
  db: Database;
  /** The database's URL, for connections of the bench's own threads. */
  databaseUrl: string;
  /** An admin token for the service. */
  token: string;
  /** Mints a token of the service's secret. */
  mint(options: { sub: string; scopes: string[]; teams?: string[] }): Promise<string>;
  stop(): Promise<void>;
}

/** `env`: the service's settings beyond the suites' common ones (e.g. AUTH_TEAMS_CLAIM). */
export async function startBenchService(env: Record<string, string> = {}): Promise<BenchService> {
  const database = await benchDatabase();
  const nodeArgs = [
    ...extraServiceFlags(),
    ...(process.env.BENCH_CPU_PROF_DIR ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`] : []),
  ];
  const service = await startServiceProcess({
    env: {
      DATABASE_URL: database.url,
      NODE_ENV: "production",
      AUTH_JWT_SECRET: SECRET,
      WEBHOOK_SECRET_KEYS: randomBytes(32).toString("base64"),
      LOG_LEVEL: "warn",
      RATE_LIMIT_PER_MINUTE: "100000000",
      ...env,
    },
    nodeArgs,
  });
  const db = openDatabase(database.url);
  const token = await mintToken({ secret: SECRET, sub: "bench", scopes: ["admin"] });
  return {
    service,
    db,
    databaseUrl: database.url,
    token,
    mint: (options) => mintToken({ secret: SECRET, ...options }),
    async stop() {
      await db.close();
      service.child.kill("SIGTERM");
      await service.exited;
      await database.stop();
    },
  };
}
