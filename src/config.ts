// The only reader of process.env: every setting is validated once at start-up, typed and frozen.
import { z } from "zod";
import { EMBEDDED_PORT } from "./db/embedded-url.ts";
import { POOL_MODES, type PoolMode } from "./db/pool-mode.ts";
import { SCAN_TYPES, type ScanType } from "./domain/scans/scans.schemas.ts";
import { SECRET_KEY_BYTES } from "./domain/webhooks/secret-box.ts";
import { TargetAllowList } from "./net/target-allow-list.ts";
import { parseTrustProxy } from "./http/trusted-proxies.ts";

const bool = z
  .enum(["true", "false", "1", "0"], { message: "must be true or false" })
  .transform((v) => v === "true" || v === "1");
const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);
const postgresUrl = z.string().regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL");
const httpUrl = z.url({ protocol: /^https?$/, message: "must be an http(s) URL" });
const BASE64_KEY = /^[A-Za-z0-9+/]{43}=?$/; // 32 bytes
/** Comma-separated base64 keys of 32 bytes; the message never repeats the value. */
const secretKeys = z.string().transform((value, ctx) => {
  const parts = value
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);
  const keys = parts.filter((part) => BASE64_KEY.test(part)).map((part) => Buffer.from(part, "base64"));
  if (keys.length === 0 || keys.length !== parts.length) {
    ctx.addIssue({
      code: "custom",
      message: `must be comma-separated base64 keys of ${SECRET_KEY_BYTES} bytes each (e.g. openssl rand -base64 32)`,
    });
    return z.NEVER;
  }
  return keys;
});

const ENGINE_KINDS = ["simulator", "external", "baseline"] as const;
export type ScanEngineKind = (typeof ENGINE_KINDS)[number];
/** Engines that scan only some types: `baseline` is the passive DAST crawl (docs/spec/CONTRACT.md §12). */
const ENGINE_SCAN_TYPES: Partial<Record<ScanEngineKind, readonly ScanType[]>> = { baseline: ["dast"] };
/** `sast:external,dast:baseline`: per scan type, the simulator, a report from CI, or a real engine. */
const scanEngines = z.string().transform((value, ctx) => {
  const engines = Object.fromEntries(SCAN_TYPES.map((type) => [type, "simulator"])) as Record<ScanType, ScanEngineKind>;
  for (const part of value
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [type, engine, ...rest] = part.split(":").map((p) => p.trim());
    if (rest.length > 0 || !SCAN_TYPES.includes(type as ScanType) || !ENGINE_KINDS.includes(engine as ScanEngineKind)) {
      ctx.addIssue({
        code: "custom",
        message: `must be comma-separated <scanType>:<engine> pairs, scanType one of ${SCAN_TYPES.join(", ")}, engine one of ${ENGINE_KINDS.join(", ")}`,
      });
      return z.NEVER;
    }
    const only = ENGINE_SCAN_TYPES[engine as ScanEngineKind];
    if (only && !only.includes(type as ScanType)) {
      ctx.addIssue({
        code: "custom",
        message: `${engine} scans ${only.join(", ")} only (e.g. ${only[0]}:${engine}), not ${type}`,
      });
      return z.NEVER;
    }
    engines[type as ScanType] = engine as ScanEngineKind;
  }
  return engines;
});
/** SCAN_TARGET_ALLOW: comma-separated hosts, IP addresses or CIDR networks. */
const targetAllowList = z.string().transform((value, ctx) => {
  try {
    return TargetAllowList.parse(value);
  } catch (err) {
    ctx.addIssue({
      code: "custom",
      message: `must be comma-separated host names, IP addresses or CIDR networks: ${(err as Error).message}`,
    });
    return z.NEVER;
  }
});

const trustProxy = z.string().transform((value, ctx) => {
  try {
    return parseTrustProxy(value);
  } catch (err) {
    ctx.addIssue({
      code: "custom",
      message: `must be a number of proxy hops, or comma-separated IP addresses, CIDR networks or loopback, linklocal, uniquelocal: ${(err as Error).message}`,
    });
    return z.NEVER;
  }
});

/** AUTH_ORG_WIDE_TEAMS, AUTH_SCOPE_CLAIMS: comma-separated names. */
const teamList = z.string().transform((value) =>
  value
    .split(",")
    .map((team) => team.trim())
    .filter(Boolean),
);

const envSchema = z.object({
  PORT: int(0, 65535).default(8080),
  HOST: z.string().min(1).default("0.0.0.0"),
  /** Port of the zero-setup embedded Postgres (only used without DATABASE_URL). */
  EMBEDDED_PG_PORT: int(1, 65535).default(EMBEDDED_PORT),
  DATABASE_URL: postgresUrl.optional(),
  /** A session connection to the same database when DATABASE_URL goes through a pooler: LISTEN and the migrations' lock. */
  DATABASE_DIRECT_URL: postgresUrl.optional(),
  /**
   * `transaction`: DATABASE_URL is a transaction pooler (PgBouncer's pool_mode = transaction, RDS
   * Proxy, Supavisor); the default once DATABASE_DIRECT_URL says DATABASE_URL is pooled, since its
   * statements are safe behind a pooler of either mode. `session` otherwise.
   */
  DATABASE_POOL_MODE: z.enum(POOL_MODES).optional(),
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  AUTH_JWT_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  AUTH_JWKS_URL: httpUrl.optional(),
  AUTH_ISSUER: z.string().min(1).optional(),
  AUTH_AUDIENCE: z.string().min(1).optional(),
  /** The claims a token's scopes are read from, in order (Entra ID puts an application's permissions in `roles`). */
  AUTH_SCOPE_CLAIMS: teamList.prefault("scope,scp"),
  /** The token claim listing the caller's teams (`teams`, `groups`): turns team access on (CONTRACT §17). */
  AUTH_TEAMS_CLAIM: z.string().min(1).optional(),
  /** Comma-separated teams whose members see every application (the AppSec team). */
  AUTH_ORG_WIDE_TEAMS: teamList.prefault(""),
  /** The identity provider (CONTRACT §18): its keys and issuer verify tokens; with OIDC_CLIENT_ID, the console signs in with it. */
  OIDC_ISSUER: httpUrl.optional(),
  /** The console's client id at the provider (a public client: Authorization Code with PKCE). */
  OIDC_CLIENT_ID: z.string().min(1).optional(),
  OIDC_SCOPES: z.string().trim().min(1).default("openid profile email offline_access"),
  /** RFC 8707 resource indicator sent on the console's authorization and token requests. */
  OIDC_RESOURCE: z.url().optional(),
  /** The provider's name on the sign-in page (default: the issuer's host). */
  OIDC_PROVIDER_NAME: z.string().trim().min(1).max(100).optional(),
  SCAN_DURATION_MS: int(0, 3_600_000).default(2000),
  SCAN_LEASE_MS: int(1000, 3_600_000).default(30_000),
  SCAN_ENGINES: scanEngines.prefault(""),
  /** How long a queued scan of an external type waits for its report before it fails. */
  SCAN_EXTERNAL_TIMEOUT_MS: int(1000, 7 * 24 * 3_600_000).default(3_600_000),
  /** The baseline DAST engine's bounds: requests per scan, time per scan, requests at once. */
  DAST_MAX_PAGES: int(1, 100_000).default(100),
  DAST_MAX_DURATION_MS: int(1000, 3_600_000).default(60_000),
  DAST_CONCURRENCY: int(1, 64).default(4),
  /** Scan targets may resolve to loopback, private, link-local, … addresses (development, tests). */
  SCAN_ALLOW_PRIVATE_TARGETS: bool.default(false),
  /** Non-public hosts and networks scan targets may reach all the same. */
  SCAN_TARGET_ALLOW: targetAllowList.prefault(""),
  /** Proxies whose X-Forwarded-For and X-Forwarded-Proto count: a number of hops, or addresses and CIDRs. */
  TRUST_PROXY: trustProxy.optional(),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: bool.default(false),
  WEBHOOK_TIMEOUT_MS: int(1, 600_000).default(10_000),
  WEBHOOK_RETRY_INITIAL_MS: int(1).default(10_000),
  WEBHOOK_RETRY_MAX_DELAY_MS: int(1).default(3_600_000),
  WEBHOOK_RETRY_WINDOW_MS: int(1).default(24 * 3_600_000),
  /** Delivery attempts one instance has in flight at once, all endpoints together. */
  WEBHOOK_CONCURRENCY: int(1, 10_000).default(256),
  /** Ceiling and floor of the adaptive number of attempts in flight to one subscription's endpoint. */
  WEBHOOK_ENDPOINT_CONCURRENCY: int(1, 10_000).default(64),
  WEBHOOK_ENDPOINT_MIN_CONCURRENCY: int(1, 10_000).default(2),
  /** Keys sealing webhook secrets at rest: the first seals, all open (rotation). */
  WEBHOOK_SECRET_KEYS: secretKeys.optional(),
  RATE_LIMIT_PER_MINUTE: int(1).default(6000),
  /** Days the event log keeps events (GET /events, subscriptions' `after`); older cursors expire. */
  EVENT_RETENTION_DAYS: int(1, 36_500).default(30),
  /** Days the log keeps the audit trail's events (application.*, policy.*, webhook.*). */
  AUDIT_RETENTION_DAYS: int(1, 36_500).default(400),
  /** How often remediation deadlines are checked: each breach is told within this of its deadline (CONTRACT §19). */
  SLA_CHECK_INTERVAL_MS: int(100, 60_000).default(15_000),
  /** Unsent bytes a graphql-ws socket may hold before its client counts as stalled and is closed. */
  GRAPHQL_WS_MAX_BUFFERED_BYTES: int(1024).default(1024 * 1024),
  METRICS_TOKEN: z.string().min(1).optional(),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL")
    .optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** After SIGTERM: how long /readyz answers 503 while requests are still served (load balancers notice). */
  SHUTDOWN_DRAIN_MS: int(0, 600_000).default(0),
  /** Then: how long requests in flight may take to finish before their connections are cut. */
  SHUTDOWN_GRACE_MS: int(0, 3_600_000).default(30_000),
});

export type Config = Readonly<Omit<z.infer<typeof envSchema>, "DATABASE_POOL_MODE"> & { DATABASE_POOL_MODE: PoolMode }>;

export class ConfigError extends Error {}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // An empty variable means "not set", as shells and .env files commonly produce.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const config = {
    ...parsed.data,
    DATABASE_POOL_MODE: parsed.data.DATABASE_POOL_MODE ?? (parsed.data.DATABASE_DIRECT_URL ? "transaction" : "session"),
  } satisfies Config;
  if (config.NODE_ENV === "production" && !config.AUTH_JWT_SECRET && !config.AUTH_JWKS_URL && !config.OIDC_ISSUER) {
    throw new ConfigError(
      "Invalid configuration:\n  AUTH_JWT_SECRET, AUTH_JWKS_URL or OIDC_ISSUER is required in production",
    );
  }
  if (config.DATABASE_DIRECT_URL && !config.DATABASE_URL) {
    throw new ConfigError(
      "Invalid configuration:\n  DATABASE_DIRECT_URL needs DATABASE_URL (the pooled URL it is the direct way to)",
    );
  }
  if (config.DATABASE_POOL_MODE === "transaction" && !config.DATABASE_DIRECT_URL) {
    throw new ConfigError(
      "Invalid configuration:\n  DATABASE_POOL_MODE=transaction needs DATABASE_DIRECT_URL: LISTEN and the migrations' lock need a session, which a transaction pooler does not keep",
    );
  }
  if (config.OIDC_CLIENT_ID && !config.OIDC_ISSUER) {
    throw new ConfigError(
      "Invalid configuration:\n  OIDC_CLIENT_ID needs OIDC_ISSUER (the provider it is registered with)",
    );
  }
  if (config.NODE_ENV === "production" && !config.WEBHOOK_SECRET_KEYS) {
    throw new ConfigError(
      "Invalid configuration:\n  WEBHOOK_SECRET_KEYS is required in production (e.g. openssl rand -base64 32)",
    );
  }
  if (config.WEBHOOK_ENDPOINT_MIN_CONCURRENCY > config.WEBHOOK_ENDPOINT_CONCURRENCY) {
    throw new ConfigError(
      "Invalid configuration:\n  WEBHOOK_ENDPOINT_MIN_CONCURRENCY must not exceed WEBHOOK_ENDPOINT_CONCURRENCY",
    );
  }
  return Object.freeze(config);
}
