import { ConfigError, loadConfig } from "../../src/config.ts";

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
    [{ NODE_ENV: "production" }, "AUTH_JWT_SECRET or AUTH_JWKS_URL"],
  ])("refuses %j, naming %s", (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(name);
  });
});
