// Composition root: builds every part of the service and starts nothing (main.ts and the tests
// decide what runs). One instance = one Koa app, one Prisma client, the background workers.
import http from "node:http";
import type Router from "@koa/router";
import type Koa from "koa";
import { issuerMetadata } from "./auth/issuer-discovery.ts";
import { createTokenVerifier } from "./auth/verify-token.ts";
import type { BackgroundWorker } from "./background-worker.ts";
import type { Config } from "./config.ts";
import { openDatabase, type Database } from "./db/client.ts";
import { createDatabaseHealth, type DatabaseHealth } from "./db/database-health.ts";
import { readMigrations } from "./db/migrate.ts";
import { registerBacklogGauge } from "./dispatcher/backlog-metric.ts";
import { createDispatcher } from "./dispatcher/dispatcher.ts";
import type { DomainSettings, ServiceContext } from "./domain/context.ts";
import { resealWebhookSecrets } from "./domain/webhooks/reseal-secrets.ts";
import { createSecretBox, type SecretBox } from "./domain/webhooks/secret-box.ts";
import { connectRedis } from "./db/redis.ts";
import { sharedListener } from "./db/shared-listener.ts";
import { createEventFeed } from "./events/event-feed.ts";
import { createEventRetention } from "./events/event-retention.ts";
import type { EventBus } from "./events/pubsub.ts";
import { shutDownGracefully } from "./graceful-shutdown.ts";
import { attachGraphqlWs, type GraphqlWsServer } from "./graphql/ws.ts";
import { createGraphqlServer, GRAPHQL_PATH, graphqlMiddleware, type GraphQLYoga } from "./graphql/yoga.ts";
import { graphiqlAssets } from "./graphql/graphiql.ts";
import { answerClientErrors } from "./http/client-errors.ts";
import { consoleMiddleware, loadConsole } from "./http/console.ts";
import { consoleCsp, consoleSignIn } from "./http/console-sign-in.ts";
import { refuseConnect } from "./http/connect-method.ts";
import { createHttpApp } from "./http/http-app.ts";
import { LiveStreams } from "./http/live-streams.ts";
import { trackConnections } from "./http/server-connections.ts";
import { createRateLimiter } from "./http/middleware/rate-limit.ts";
import { buildOpenApi, type IssuerEndpoints } from "./http/openapi.ts";
import type { RouteDefinition } from "./http/route.ts";
import { applicationRoutes } from "./http/routes/applications.routes.ts";
import { eventRoutes } from "./http/routes/events.routes.ts";
import { meRoutes } from "./http/routes/me.routes.ts";
import { policyRoutes } from "./http/routes/policies.routes.ts";
import { slaRoutes } from "./http/routes/sla.routes.ts";
import { createDeadlineWatcher, DEADLINE_WATCHER_NAME } from "./domain/sla/deadline-watcher.ts";
import { policyEvaluationRoutes } from "./http/routes/policy-evaluation.routes.ts";
import { scanJobRoutes } from "./http/routes/scan-jobs.routes.ts";
import { scanReportRoutes } from "./http/routes/scan-reports.routes.ts";
import { scanRoutes } from "./http/routes/scans.routes.ts";
import { vulnerabilityRoutes } from "./http/routes/vulnerabilities.routes.ts";
import { vexRoutes } from "./http/routes/vex.routes.ts";
import { webhookDeliveryRoutes } from "./http/routes/webhook-deliveries.routes.ts";
import { systemRoutes } from "./http/routes/system.routes.ts";
import { webhookRoutes } from "./http/routes/webhooks.routes.ts";
import { createLogger, type Logger } from "./log.ts";
import { createMetrics, type Metrics } from "./metrics.ts";
import { createQueuedScanSignal } from "./domain/scans/queued-scan-signal.ts";
import { SCAN_TYPES } from "./domain/scans/scans.schemas.ts";
import { createEngines } from "./scans/engines/create-engines.ts";
import type { ScannerEngine, ScanType } from "./scans/engines/engine.ts";
import { closeReportReaders } from "./scans/reports/read-report-off-thread.ts";
import { createScanRunner, type ScanRunner } from "./scans/scan-runner.ts";

export const SERVICE_VERSION = "0.1.0";

export interface AppOptions {
  config: Config;
  databaseUrl: string;
  /** HS256 secret in force (the configured one or the zero-setup development one). */
  jwtSecret?: string;
  /** Keys sealing webhook secrets (WEBHOOK_SECRET_KEYS or the zero-setup development one). */
  webhookSecretKeys?: readonly Buffer[];
  log?: Logger;
  /** Engines replacing the simulator for some scan types (tests). */
  scanEngines?: Partial<Record<ScanType, ScannerEngine>>;
  /** CAs the baseline engine trusts besides Node's (tests; in production NODE_EXTRA_CA_CERTS). */
  scanTargetTls?: { ca?: string | Buffer };
}

export interface App {
  config: Config;
  log: Logger;
  db: Database;
  /** Whether the database can be reached (docs/spec/CONTRACT.md §15). */
  health: DatabaseHealth;
  metrics: Metrics;
  koa: Koa;
  router: Router;
  server: http.Server;
  routes: readonly RouteDefinition[];
  workers: BackgroundWorker[];
  yoga: GraphQLYoga;
  events: EventBus;
  /** Seals and opens webhook secrets (WEBHOOK_SECRET_KEYS). */
  webhookSecrets: SecretBox;
  /** Serves graphql-ws on `server`'s /graphql path (main.ts and the tests call it with app.server). */
  attachGraphqlWs(server: http.Server): void;
  scanRunner: ScanRunner;
  /**
   * Shuts down in the order load balancers expect (graceful-shutdown.ts): not ready at once, still
   * serving for SHUTDOWN_DRAIN_MS, then in-flight requests get SHUTDOWN_GRACE_MS. `signal` is logged.
   */
  close(signal?: string): Promise<void>;
}

export async function buildApp(options: AppOptions): Promise<App> {
  const { config } = options;
  const log = options.log ?? createLogger(config.LOG_LEVEL);
  const webhookSecrets = createSecretBox(options.webhookSecretKeys ?? config.WEBHOOK_SECRET_KEYS ?? []);
  const db = openDatabase(options.databaseUrl, {
    poolMode: config.DATABASE_POOL_MODE,
    directUrl: config.DATABASE_DIRECT_URL,
  });
  const health = createDatabaseHealth({ databaseUrl: options.databaseUrl, log });
  const listener = sharedListener(db.listenOn, { log, health });
  const metrics = createMetrics();
  const migrations = await readMigrations();
  const resealed = await resealWebhookSecrets(db.pool, webhookSecrets).catch(async (err: unknown) => {
    await db.close();
    throw err;
  });
  if (resealed)
    log.info({ resealed, keyId: webhookSecrets.sealingKeyId }, "webhook secrets sealed with the current key");
  const externalScanTypes = SCAN_TYPES.filter((type) => config.SCAN_ENGINES[type] === "external");
  const engines = createEngines({
    durationMs: config.SCAN_DURATION_MS,
    kinds: config.SCAN_ENGINES,
    baseline: {
      maxPages: config.DAST_MAX_PAGES,
      maxDurationMs: config.DAST_MAX_DURATION_MS,
      concurrency: config.DAST_CONCURRENCY,
      targetPolicy: { allowPrivateTargets: config.SCAN_ALLOW_PRIVATE_TARGETS, allowList: config.SCAN_TARGET_ALLOW },
      tls: options.scanTargetTls,
    },
    overrides: options.scanEngines,
  });
  const scanEngines = Object.fromEntries(
    SCAN_TYPES.filter((type) => !externalScanTypes.includes(type)).map((type) => [
      type,
      { source: engines[type].source, needsServiceUrl: engines[type].needsServiceUrl ?? false },
    ]),
  );
  const settings: DomainSettings = {
    allowPrivateWebhookTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    webhookSecrets,
    externalScanTypes,
    scanEngines,
  };

  const provider = config.OIDC_ISSUER ? issuerMetadata(config.OIDC_ISSUER) : undefined;
  const signIn = consoleSignIn(config);
  // Read early so the console's policy knows the provider's endpoints; an unreachable provider is
  // read again when a token or a sign-in needs it.
  provider?.get().catch((err: unknown) => log.warn({ err, issuer: config.OIDC_ISSUER }, "OIDC discovery failed"));
  const verifyToken = createTokenVerifier({
    jwtSecret: options.jwtSecret ?? config.AUTH_JWT_SECRET,
    jwksUrl: config.AUTH_JWKS_URL,
    provider,
    issuer: config.AUTH_ISSUER,
    audience: config.AUTH_AUDIENCE,
    scopeClaims: config.AUTH_SCOPE_CLAIMS,
    teams: { claim: config.AUTH_TEAMS_CLAIM, orgWideTeams: config.AUTH_ORG_WIDE_TEAMS },
  });

  const apiRoutes: RouteDefinition[] = [
    ...applicationRoutes,
    ...scanRoutes,
    ...scanReportRoutes,
    ...scanJobRoutes,
    ...vulnerabilityRoutes,
    ...vexRoutes,
    ...policyRoutes,
    ...slaRoutes,
    ...policyEvaluationRoutes,
    ...webhookRoutes,
    ...webhookDeliveryRoutes,
    ...eventRoutes,
    ...meRoutes,
  ];
  let stopping = false;
  const routes: RouteDefinition[] = [
    ...systemRoutes({
      pool: db.pool,
      health,
      migrations,
      metrics,
      metricsToken: config.METRICS_TOKEN,
      openApi: () => openApi(provider?.known()),
      stopping: () => stopping,
    }),
    ...apiRoutes,
  ];
  // Built again once the provider's discovery has been read (its token endpoints join the document).
  let built: { issuer: IssuerEndpoints | undefined; document: unknown } | undefined;
  const openApi = (issuer: IssuerEndpoints | undefined) => {
    if (!built || built.issuer !== issuer) {
      built = { issuer, document: buildOpenApi(routes, { version: SERVICE_VERSION, issuer }) };
    }
    return built.document;
  };

  const redis = config.REDIS_URL ? await connectRedis(config.REDIS_URL, log) : undefined;
  const feed = createEventFeed({
    redis: redis && { url: config.REDIS_URL!, client: redis },
    listenOn: listener,
    pool: db.pool,
    log,
    health,
  });
  const events = feed.bus;
  const production = config.NODE_ENV === "production";
  const yoga = createGraphqlServer({ production, events, log, health });
  const scanQueue = createQueuedScanSignal(listener, log.child({ worker: "queued-scan-signal" }));
  const serviceContextFor = (actor: ServiceContext["actor"], requestLog: Logger = log): ServiceContext => ({
    db: db.prisma,
    pool: db.pool,
    actor,
    log: requestLog,
    settings,
    scanQueue,
  });
  const graphqlWs: GraphqlWsServer[] = [];
  const liveStreams = new LiveStreams();

  const { koa, router } = createHttpApp({
    log,
    metrics,
    verifyToken,
    rateLimitPerMinute: config.RATE_LIMIT_PER_MINUTE,
    rateLimiter: createRateLimiter(config.RATE_LIMIT_PER_MINUTE, redis),
    trustProxy: config.TRUST_PROXY,
    routes,
    serviceContext: (ctx) => serviceContextFor(ctx.state.actor, ctx.state.log),
    health,
    protectedPaths: [GRAPHQL_PATH],
    before: [
      graphqlMiddleware(yoga, (ctx) => serviceContextFor(ctx.state.actor, ctx.state.log), {
        graphiql: !production,
        liveStreams,
        health,
      }),
      ...(production ? [] : [graphiqlAssets()]),
      consoleMiddleware(
        loadConsole(undefined, signIn),
        consoleCsp(signIn, () => [provider?.known()?.token_endpoint, provider?.known()?.revocation_endpoint]),
      ),
    ],
  });
  const server = http.createServer(koa.callback());
  const connections = trackConnections(server);
  refuseConnect(server);
  answerClientErrors(server);
  const workers: BackgroundWorker[] = [];
  const scanRunner = createScanRunner({
    db: db.prisma,
    listenOn: listener,
    engines,
    log: log.child({ worker: "scan-runner" }),
    health,
    leaseMs: config.SCAN_LEASE_MS,
    external: { scanTypes: externalScanTypes, timeoutMs: config.SCAN_EXTERNAL_TIMEOUT_MS },
  });
  workers.push(
    scanRunner,
    scanQueue,
    createDispatcher({
      db,
      config,
      log,
      metrics,
      webhookSecrets,
      health,
      listenOn: listener,
      onFannedOut: feed.fannedOut,
      wantsFannedOut: feed.wantsEvents,
    }),
    createEventRetention({
      pool: db.pool,
      retentionDays: config.EVENT_RETENTION_DAYS,
      auditRetentionDays: config.AUDIT_RETENTION_DAYS,
      log: log.child({ worker: "event-retention" }),
      health,
    }),
  );
  workers.push(
    createDeadlineWatcher({
      pool: db.pool,
      log: log.child({ worker: DEADLINE_WATCHER_NAME }),
      health,
      intervalMs: config.SLA_CHECK_INTERVAL_MS,
    }),
  );
  registerBacklogGauge(metrics.registry, db.pool);

  let closing: Promise<void> | undefined;
  return {
    config,
    log,
    db,
    health,
    metrics,
    koa,
    router,
    server,
    routes,
    workers,
    scanRunner,
    yoga,
    events,
    webhookSecrets,
    attachGraphqlWs(target) {
      graphqlWs.push(
        attachGraphqlWs(target, {
          yoga,
          verifyToken,
          serviceContext: (actor) => serviceContextFor(actor),
          maxBufferedBytes: config.GRAPHQL_WS_MAX_BUFFERED_BYTES,
        }),
      );
    },
    close(signal) {
      stopping = true;
      closing ??= shutDownGracefully(
        {
          log,
          drainMs: config.SHUTDOWN_DRAIN_MS,
          graceMs: config.SHUTDOWN_GRACE_MS,
          server,
          connections,
          workers,
          graphqlWs,
          liveStreams,
          abandonRequests() {
            db.endConnectionsInUse();
            // A VEX being applied has a connection of its own in a report thread: ending the threads ends it.
            void closeReportReaders();
          },
          async release() {
            await feed.close();
            await listener.close();
            await redis?.quit().catch(() => redis.disconnect());
            await closeReportReaders();
            health.close();
            await db.close();
          },
        },
        signal,
      );
      return closing;
    },
  };
}
