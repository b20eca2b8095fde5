// A real service instance on a real port against a private database, plus a small HTTP client.
import type { AddressInfo } from "node:net";
import { buildApp, type App, type AppOptions } from "../../src/app.ts";
import { mintToken } from "../../src/auth/mint-token.ts";
import { createDispatcher, type DispatcherOptions, type WebhookDispatcher } from "../../src/dispatcher/dispatcher.ts";
import { loadConfig } from "../../src/config.ts";
import { createSecretBox } from "../../src/domain/webhooks/secret-box.ts";
import type { Logger } from "../../src/log.ts";
import { createTestDatabase, type TestDatabase } from "./database.ts";
import { responseValidator } from "./response-validator.ts";
import { buildOpenApi } from "../../src/http/openapi.ts";

export const TEST_JWT_SECRET = "test-secret-test-secret-test-secret-0123";
/** WEBHOOK_SECRET_KEYS of every test instance (32 bytes, base64). */
export const TEST_WEBHOOK_SECRET_KEYS = Buffer.alloc(32, "test-webhook-key").toString("base64");
/** Seals and opens secrets as a test instance does, for rows a test writes or reads itself. */
export const testSecretBox = () => createSecretBox([Buffer.from(TEST_WEBHOOK_SECRET_KEYS, "base64")]);

export interface TestApp {
  app: App;
  baseUrl: string;
  database: TestDatabase;
  /** A token for `sub` with the given scopes (default: admin) and, when given, teams (under AUTH_TEAMS_CLAIM). */
  token(scopes?: string[], sub?: string, teams?: string[]): Promise<string>;
  /** fetch against the service with JSON in and out; `token: null` sends no Authorization. */
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as-is (not JSON-encoded). */
  rawBody?: string;
  token?: string | null;
  headers?: Record<string, string>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/**
 * `database`: share another instance's database (several instances of one service). `workers`: the
 * background workers to start by name (none by default: tests drive them with runOnce); live events
 * need the webhook dispatcher, whose fan-out numbers events into the event log.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  options: {
    log?: Logger;
    database?: TestDatabase;
    scanTargetTls?: AppOptions["scanTargetTls"];
    workers?: readonly string[];
  } = {},
): Promise<TestApp> {
  const ownDatabase = !options.database;
  const database = options.database ?? (await createTestDatabase());
  const config = loadConfig({
    NODE_ENV: "test",
    AUTH_JWT_SECRET: TEST_JWT_SECRET,
    WEBHOOK_SECRET_KEYS: TEST_WEBHOOK_SECRET_KEYS,
    LOG_LEVEL: "silent",
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "false",
    SHUTDOWN_GRACE_MS: "5000", // close() in a test's teardown cuts a connection a test left open after 5 s, not 30
    ...database.env,
    ...env,
  });
  const app = await buildApp({
    config,
    databaseUrl: database.url,
    log: options.log,
    scanTargetTls: options.scanTargetTls,
  });
  app.attachGraphqlWs(app.server);
  await new Promise<void>((resolve) => app.server.listen(0, "127.0.0.1", resolve));
  for (const worker of app.workers) if (options.workers?.includes(worker.name)) worker.start();
  const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const token = (scopes = ["admin"], sub = "tester", teams?: string[]) =>
    mintToken({
      secret: TEST_JWT_SECRET,
      sub,
      scopes,
      teams,
      teamsClaim: config.AUTH_TEAMS_CLAIM,
      issuer: config.AUTH_ISSUER,
      audience: config.AUTH_AUDIENCE,
    });
  const adminToken = await token();
  // The document /openapi.json serves, built here: fetching it would count against the rate limit.
  const checkResponse = responseValidator(buildOpenApi(app.routes, { version: "test" }));

  return {
    app,
    baseUrl,
    database,
    token,
    async request(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      const bearer = options.token === undefined ? adminToken : options.token;
      if (bearer !== null) headers.authorization ??= `Bearer ${bearer}`;
      let body: string | undefined;
      if (options.rawBody !== undefined) body = options.rawBody;
      else if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers["content-type"] ??= "application/json";
      }
      const res = await fetch(baseUrl + path, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = undefined;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      if (path !== "/openapi.json") {
        checkResponse(method, path, res.status, res.headers.get("content-type"), parsed);
      }
      return { status: res.status, headers: res.headers, body: parsed, text };
    },
    async close() {
      await app.close();
      if (ownDatabase) await database.drop();
    },
  };
}

/** A dispatcher of this instance's that trusts `ca` (a test receiver's self-signed certificate). */
export function dispatcherTrusting(
  t: TestApp,
  ca: string,
  overrides: Partial<DispatcherOptions> = {},
): WebhookDispatcher {
  return createDispatcher({
    db: t.app.db,
    config: t.app.config,
    log: t.app.log,
    metrics: t.app.metrics,
    webhookSecrets: t.app.webhookSecrets,
    tls: { ca },
    ...overrides,
  });
}
