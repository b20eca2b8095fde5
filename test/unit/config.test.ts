import { ConfigError, loadConfig } from "../../src/config.ts";

const KEY_A = Buffer.alloc(32, "key-a").toString("base64");
const KEY_B = Buffer.alloc(32, "key-b").toString("base64");

describe("loadConfig", () => {
  it("has the documented defaults", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      PORT: 8080,
      HOST: "0.0.0.0",
      NODE_ENV: "development",
      RATE_LIMIT_PER_MINUTE: 6000,
      WEBHOOK_TIMEOUT_MS: 10_000,
      WEBHOOK_RETRY_INITIAL_MS: 10_000,
      WEBHOOK_RETRY_MAX_DELAY_MS: 3_600_000,
      WEBHOOK_RETRY_WINDOW_MS: 86_400_000,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: false,
      LOG_LEVEL: "info",
      SHUTDOWN_DRAIN_MS: 0,
      SHUTDOWN_GRACE_MS: 30_000,
    });
    expect(config.DATABASE_URL).toBeUndefined();
    expect(Object.isFrozen(config)).toBe(true);
  });

  it("treats empty variables as unset and parses booleans and numbers", () => {
    expect(loadConfig({ PORT: "", WEBHOOK_ALLOW_PRIVATE_TARGETS: "true", SCAN_DURATION_MS: "0" })).toMatchObject({
      PORT: 8080,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: true,
      SCAN_DURATION_MS: 0,
    });
  });

  it.each([
    [{ PORT: "http" }, "PORT"],
    [{ PORT: "70000" }, "PORT"],
    [{ DATABASE_URL: "mysql://x" }, "DATABASE_URL"],
    [{ WEBHOOK_ALLOW_PRIVATE_TARGETS: "yes" }, "WEBHOOK_ALLOW_PRIVATE_TARGETS"],
    [{ AUTH_JWT_SECRET: "short" }, "AUTH_JWT_SECRET"],
    [{ AUTH_JWKS_URL: "ftp://keys" }, "AUTH_JWKS_URL"],
    [{ LOG_LEVEL: "loud" }, "LOG_LEVEL"],
    [{ RATE_LIMIT_PER_MINUTE: "0" }, "RATE_LIMIT_PER_MINUTE"],
    [{ REDIS_URL: "localhost:6379" }, "REDIS_URL"],
    [{ SHUTDOWN_DRAIN_MS: "-1" }, "SHUTDOWN_DRAIN_MS"],
    [{ SHUTDOWN_DRAIN_MS: "5s" }, "SHUTDOWN_DRAIN_MS"],
    [{ SHUTDOWN_GRACE_MS: "1.5" }, "SHUTDOWN_GRACE_MS"],
    [{ SHUTDOWN_GRACE_MS: "3600001" }, "SHUTDOWN_GRACE_MS"],
    [{ NODE_ENV: "production" }, "AUTH_JWT_SECRET, AUTH_JWKS_URL or OIDC_ISSUER"],
    [{ NODE_ENV: "production", AUTH_JWT_SECRET: "x".repeat(32) }, "WEBHOOK_SECRET_KEYS is required in production"],
    [{ OIDC_ISSUER: "issuer.example" }, "OIDC_ISSUER"],
    [{ OIDC_CLIENT_ID: "console" }, "OIDC_CLIENT_ID needs OIDC_ISSUER"],
    [{ DATABASE_DIRECT_URL: "postgres://db:5432/appsec" }, "DATABASE_DIRECT_URL needs DATABASE_URL"],
    [{ DATABASE_URL: "postgres://pooler:6432/appsec", DATABASE_DIRECT_URL: "db:5432" }, "DATABASE_DIRECT_URL"],
    [{ DATABASE_URL: "postgres://pooler:6432/appsec", DATABASE_POOL_MODE: "transaction" }, "needs DATABASE_DIRECT_URL"],
    [{ DATABASE_URL: "postgres://pooler:6432/appsec", DATABASE_POOL_MODE: "statement" }, "DATABASE_POOL_MODE"],
    [{ OIDC_ISSUER: "https://id.example", OIDC_RESOURCE: "not a url" }, "OIDC_RESOURCE"],
    [{ WEBHOOK_SECRET_KEYS: "not-base64-at-all" }, "WEBHOOK_SECRET_KEYS"],
    [{ WEBHOOK_SECRET_KEYS: Buffer.alloc(16, 7).toString("base64") }, "WEBHOOK_SECRET_KEYS"],
    [{ WEBHOOK_SECRET_KEYS: `${KEY_A},${KEY_A.slice(1)}` }, "WEBHOOK_SECRET_KEYS"],
  ])("refuses %j, naming %s", (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(name);
  });

  it("takes DATABASE_URL for a session unless a DATABASE_DIRECT_URL says it is pooled, or DATABASE_POOL_MODE says otherwise", () => {
    const pooled = { DATABASE_URL: "postgres://pooler:6432/appsec", DATABASE_DIRECT_URL: "postgres://db:5432/appsec" };
    expect(loadConfig({}).DATABASE_POOL_MODE).toBe("session");
    expect(loadConfig({ DATABASE_URL: pooled.DATABASE_URL }).DATABASE_POOL_MODE).toBe("session");
    expect(loadConfig(pooled).DATABASE_POOL_MODE).toBe("transaction");
    expect(loadConfig({ ...pooled, DATABASE_POOL_MODE: "session" }).DATABASE_POOL_MODE).toBe("session");
  });

  it("reads WEBHOOK_SECRET_KEYS as 32-byte keys in order, and never repeats a bad value", () => {
    expect(loadConfig({ WEBHOOK_SECRET_KEYS: ` ${KEY_A} , ${KEY_B}` }).WEBHOOK_SECRET_KEYS).toEqual([
      Buffer.from(KEY_A, "base64"),
      Buffer.from(KEY_B, "base64"),
    ]);
    const leaked = KEY_A.slice(0, 40);
    expect(() => loadConfig({ WEBHOOK_SECRET_KEYS: leaked })).toThrow(/base64 keys of 32 bytes/);
    expect(() => loadConfig({ WEBHOOK_SECRET_KEYS: leaked })).not.toThrow(leaked);
  });

  describe("the baseline DAST engine's settings", () => {
    it("defaults to 100 pages, 60 s, 4 requests at once, and no private targets", () => {
      const config = loadConfig({});
      expect(config).toMatchObject({
        DAST_MAX_PAGES: 100,
        DAST_MAX_DURATION_MS: 60_000,
        DAST_CONCURRENCY: 4,
        SCAN_ALLOW_PRIVATE_TARGETS: false,
      });
      expect(config.SCAN_TARGET_ALLOW.entries).toEqual([]);
      expect(config.SCAN_ENGINES).toEqual({
        sast: "simulator",
        dast: "simulator",
        sca: "simulator",
        container: "simulator",
      });
    });

    it("reads them", () => {
      const config = loadConfig({
        SCAN_ENGINES: "dast:baseline, sast:external",
        DAST_MAX_PAGES: "500",
        DAST_MAX_DURATION_MS: "120000",
        DAST_CONCURRENCY: "8",
        SCAN_ALLOW_PRIVATE_TARGETS: "true",
        SCAN_TARGET_ALLOW: "staging.internal, 10.20.0.0/16",
      });
      expect(config).toMatchObject({
        DAST_MAX_PAGES: 500,
        DAST_MAX_DURATION_MS: 120_000,
        DAST_CONCURRENCY: 8,
        SCAN_ALLOW_PRIVATE_TARGETS: true,
      });
      expect(config.SCAN_ENGINES).toMatchObject({ dast: "baseline", sast: "external", sca: "simulator" });
      expect(config.SCAN_TARGET_ALLOW.allowsHost("staging.internal")).toBe(true);
      expect(config.SCAN_TARGET_ALLOW.allowsAddress("10.20.3.4")).toBe(true);
    });

    it.each([
      [{ SCAN_ENGINES: "sast:baseline" }, "SCAN_ENGINES: baseline scans dast only (e.g. dast:baseline), not sast"],
      [
        { SCAN_ENGINES: "dast:zap" },
        "SCAN_ENGINES: must be comma-separated <scanType>:<engine> pairs, scanType one of sast, dast, sca, container, engine one of simulator, external, baseline",
      ],
      [{ DAST_MAX_PAGES: "0" }, "DAST_MAX_PAGES"],
      [{ DAST_MAX_PAGES: "many" }, "DAST_MAX_PAGES"],
      [{ DAST_MAX_DURATION_MS: "999" }, "DAST_MAX_DURATION_MS"],
      [{ DAST_CONCURRENCY: "65" }, "DAST_CONCURRENCY"],
      [{ SCAN_ALLOW_PRIVATE_TARGETS: "yes" }, "SCAN_ALLOW_PRIVATE_TARGETS: must be true or false"],
      [
        { SCAN_TARGET_ALLOW: "10.0.0.0/8,10.1.0.0/99" },
        'SCAN_TARGET_ALLOW: must be comma-separated host names, IP addresses or CIDR networks: "10.1.0.0/99" has no valid prefix length (0-32)',
      ],
      [
        { SCAN_TARGET_ALLOW: "http://staging" },
        'SCAN_TARGET_ALLOW: must be comma-separated host names, IP addresses or CIDR networks: "http://staging" is neither',
      ],
    ])("refuses %j with a message naming the variable and the value's fault", (env, message) => {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(message);
    });
  });
});
