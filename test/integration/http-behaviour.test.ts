// Cross-cutting HTTP behaviour (docs/spec/CONTRACT.md §1, §2, §9): authentication, problem+json, 405/413/415,
// request ids, rate limits and the operational endpoints.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT } from "jose";
import pino from "pino";
import { TEST_JWT_SECRET, startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const secretKey = new TextEncoder().encode(TEST_JWT_SECRET);
const sign = (claims: Record<string, unknown>, exp: string | number = "5m") =>
  new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).setSubject("s").setExpirationTime(exp).sign(secretKey);

describe("authentication", () => {
  it("answers 401 with a bare Bearer challenge when the header is missing", async () => {
    const res = await t.request("GET", "/applications", { token: null });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe("Bearer");
    expect(res.body).toMatchObject({ code: "unauthorized", status: 401, type: "/problems/unauthorized" });
  });

  it.each([
    ["a malformed header", async () => "Basic dXNlcjpwYXNz"],
    ["garbage", async () => "Bearer not-a-jwt"],
    ["an expired token", async () => `Bearer ${await sign({ scope: "admin" }, Math.floor(Date.now() / 1000) - 120)}`],
    [
      "a wrong key",
      async () =>
        `Bearer ${await new SignJWT({ scope: "admin" }).setProtectedHeader({ alg: "HS256" }).setSubject("s").setExpirationTime("5m").sign(new TextEncoder().encode("another-secret-another-secret-0123456"))}`,
    ],
    [
      "alg none",
      async () => `Bearer ${new UnsecuredJWT({ scope: "admin" }).setSubject("s").setExpirationTime("5m").encode()}`,
    ],
    [
      "no exp",
      async () =>
        `Bearer ${await new SignJWT({ scope: "admin" }).setProtectedHeader({ alg: "HS256" }).setSubject("s").sign(secretKey)}`,
    ],
    [
      "a future nbf",
      async () =>
        `Bearer ${await new SignJWT({ scope: "admin" }).setProtectedHeader({ alg: "HS256" }).setSubject("s").setNotBefore("10m").setExpirationTime("20m").sign(secretKey)}`,
    ],
    [
      "an RS256 token when only HS256 is configured",
      async () => {
        const { privateKey } = await generateKeyPair("RS256");
        return `Bearer ${await new SignJWT({ scope: "admin" }).setProtectedHeader({ alg: "RS256" }).setSubject("s").setExpirationTime("5m").sign(privateKey)}`;
      },
    ],
  ])("answers 401 invalid_token for %s", async (_label, header) => {
    const res = await t.request("GET", "/applications", { token: null, headers: { authorization: await header() } });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
  });

  it("tolerates 30 s of clock skew on exp", async () => {
    const token = await sign({ scope: "admin" }, Math.floor(Date.now() / 1000) - 10);
    expect((await t.request("GET", "/applications", { token })).status).toBe(200);
  });

  it("accepts scopes as a scp array", async () => {
    const token = await sign({ scp: ["applications:read"] });
    expect((await t.request("GET", "/applications", { token })).status).toBe(200);
  });

  it("answers 403 insufficient_scope naming the scope; write does not imply read", async () => {
    const token = await t.token(["applications:write"]);
    const res = await t.request("GET", "/applications", { token });
    expect(res.status).toBe(403);
    expect(res.headers.get("www-authenticate")).toBe('Bearer error="insufficient_scope", scope="applications:read"');
    expect(res.body.code).toBe("forbidden");
    const write = await t.request("POST", "/applications", {
      token: await t.token(["applications:read"]),
      body: { name: "x" },
    });
    expect(write.status).toBe(403);
  });

  it("answers 403 before reading the body of a caller without the write scope", async () => {
    const reader = await t.token(["applications:read"]);
    const res = await t.request("POST", "/applications", {
      token: reader,
      rawBody: "{bad",
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(403);
    expect(res.headers.get("www-authenticate")).toBe('Bearer error="insufficient_scope", scope="applications:write"');
  });

  it("checks authentication before validation and existence", async () => {
    expect((await t.request("POST", "/applications", { token: null, body: { bogus: 1 } })).status).toBe(401);
    expect(
      (
        await t.request("POST", "/applications", {
          token: null,
          rawBody: "{",
          headers: { "content-type": "application/json" },
        })
      ).status,
    ).toBe(401);
    expect((await t.request("GET", "/applications/nope", { token: null })).status).toBe(401);
    expect((await t.request("GET", "/applications?limit=0", { token: null })).status).toBe(401);
  });

  it("answers 404 for unknown routes with or without a token", async () => {
    for (const token of [undefined, null]) {
      const res = await t.request("GET", "/nowhere", { token });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("not_found");
    }
  });

  it("checks iss and aud when configured", async () => {
    const strict = await startTestApp({ AUTH_ISSUER: "https://idp.example", AUTH_AUDIENCE: "appsec" });
    try {
      const good = await new SignJWT({ scope: "admin" })
        .setProtectedHeader({ alg: "HS256" })
        .setSubject("s")
        .setIssuer("https://idp.example")
        .setAudience("appsec")
        .setExpirationTime("5m")
        .sign(secretKey);
      const wrongAud = await new SignJWT({ scope: "admin" })
        .setProtectedHeader({ alg: "HS256" })
        .setSubject("s")
        .setIssuer("https://idp.example")
        .setAudience("other")
        .setExpirationTime("5m")
        .sign(secretKey);
      expect((await strict.request("GET", "/applications", { token: good })).status).toBe(200);
      expect((await strict.request("GET", "/applications", { token: wrongAud })).status).toBe(401);
      expect((await strict.request("GET", "/applications", { token: await sign({ scope: "admin" }) })).status).toBe(
        401,
      );
    } finally {
      await strict.close();
    }
  });
});

describe("JWKS", () => {
  it("verifies ES256 and EdDSA tokens against keys from AUTH_JWKS_URL", async () => {
    const es = await generateKeyPair("ES256");
    const ed = await generateKeyPair("EdDSA");
    const keys = [
      { ...(await exportJWK(es.publicKey)), kid: "es", alg: "ES256" },
      { ...(await exportJWK(ed.publicKey)), kid: "ed", alg: "EdDSA" },
    ];
    const jwks = http.createServer((_req, res) =>
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys })),
    );
    await new Promise<void>((resolve) => jwks.listen(0, "127.0.0.1", resolve));
    const viaJwks = await startTestApp({
      AUTH_JWKS_URL: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`,
    });
    try {
      for (const [kid, alg, key] of [
        ["es", "ES256", es.privateKey],
        ["ed", "EdDSA", ed.privateKey],
      ] as const) {
        const token = await new SignJWT({ scope: "applications:read" })
          .setProtectedHeader({ alg, kid })
          .setSubject("svc")
          .setExpirationTime("5m")
          .sign(key);
        expect((await viaJwks.request("GET", "/applications", { token })).status).toBe(200);
      }
      const stranger = await generateKeyPair("ES256");
      const forged = await new SignJWT({ scope: "admin" })
        .setProtectedHeader({ alg: "ES256", kid: "es" })
        .setSubject("svc")
        .setExpirationTime("5m")
        .sign(stranger.privateKey);
      expect((await viaJwks.request("GET", "/applications", { token: forged })).status).toBe(401);
    } finally {
      await viaJwks.close();
      jwks.close();
    }
  });
});

describe("request errors", () => {
  it("answers 405 with Allow for a known path and a wrong method", async () => {
    const res = await t.request("PATCH", "/applications");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toContain("POST");
    expect(res.body.code).toBe("method_not_allowed");
    const item = await t.request("POST", "/applications/0190a8c6-0000-7000-8000-000000000000");
    expect(item.status).toBe(405);
    expect(item.headers.get("allow")).toEqual(expect.stringContaining("PUT"));
  });

  it("answers 400 malformed_json for broken JSON", async () => {
    const res = await t.request("POST", "/applications", {
      rawBody: '{"name": ',
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("malformed_json");
  });

  it("answers 415 for a body that is not JSON", async () => {
    const res = await t.request("POST", "/applications", {
      rawBody: "name=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(415);
    expect(res.body.code).toBe("unsupported_media_type");
  });

  it("answers 413 above 1 MiB and accepts exactly 1 MiB", async () => {
    const wrap = (size: number) => {
      const shell = '{"name":"big","description":""}';
      return `{"name":"big","description":"${"x".repeat(size - shell.length)}"}`;
    };
    const over = await t.request("POST", "/applications", {
      rawBody: wrap(1024 * 1024 + 1),
      headers: { "content-type": "application/json" },
    });
    expect(over.status).toBe(413);
    expect(over.body.code).toBe("payload_too_large");
    // Exactly 1 MiB is read and parsed; it fails only on the description limit.
    const exact = await t.request("POST", "/applications", {
      rawBody: wrap(1024 * 1024),
      headers: { "content-type": "application/json" },
    });
    expect(exact.status).toBe(400);
    expect(exact.body.errors[0].path).toBe("description");
  });

  it("answers an internal failure with a bare 500 problem and logs it with the request id", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const broken = await startTestApp({}, { log: pino({ level: "error" }, sink) });
    try {
      await broken.app.db.pool.query("ALTER TABLE applications RENAME TO applications_gone");
      const res = await broken.request("GET", "/applications", { headers: { "x-request-id": "boom-1" } });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({
        type: "/problems/internal",
        title: "Internal server error",
        status: 500,
        detail: expect.any(String),
        code: "internal",
      });
      expect(res.text).not.toMatch(/applications_gone|prisma|\.ts/i);
      expect(lines.map((l) => JSON.parse(l)).some((l) => l.requestId === "boom-1" && l.err)).toBe(true);
    } finally {
      await broken.close();
    }
  });

  it("never shows internals in problem bodies", async () => {
    const res = await t.request("POST", "/applications", { body: { name: ["x"] } });
    expect(res.status).toBe(400);
    expect(res.text).not.toMatch(/at .*\.ts:\d+/);
  });
});

describe("request ids and logs", () => {
  it("logs one structured line per request with the request id and never the token", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logged = await startTestApp({}, { log: pino({ level: "info" }, sink) });
    try {
      const token = await logged.token(["admin"], "auditor");
      await logged.request("GET", "/applications?owner=x", { token, headers: { "x-request-id": "trace-42" } });
      const entry = lines.map((l) => JSON.parse(l)).find((l) => l.requestId === "trace-42");
      expect(entry).toMatchObject({
        msg: "request",
        method: "GET",
        path: "/applications",
        status: 200,
        sub: "auditor",
      });
      expect(lines.join("")).not.toContain(token);
    } finally {
      await logged.close();
    }
  });

  it("echoes a sane X-Request-Id and makes one otherwise", async () => {
    const echoed = await t.request("GET", "/healthz", { headers: { "x-request-id": "abc-123" } });
    expect(echoed.headers.get("x-request-id")).toBe("abc-123");
    const made = await t.request("GET", "/healthz", { headers: { "x-request-id": "bad id with spaces" } });
    expect(made.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("rate limits", () => {
  it("counts per caller, sends RateLimit headers and answers 429 with Retry-After", async () => {
    const limited = await startTestApp({ RATE_LIMIT_PER_MINUTE: "3" });
    try {
      const alice = await limited.token(["admin"], "alice");
      const bob = await limited.token(["admin"], "bob");
      const first = await limited.request("GET", "/applications", { token: alice });
      expect(first.headers.get("ratelimit-limit")).toBe("3");
      expect(first.headers.get("ratelimit-remaining")).toBe("2");
      expect(Number(first.headers.get("ratelimit-reset"))).toBeGreaterThan(0);
      await limited.request("GET", "/applications", { token: alice });
      await limited.request("GET", "/applications", { token: alice });
      const fourth = await limited.request("GET", "/applications", { token: alice });
      expect(fourth.status).toBe(429);
      expect(fourth.body.code).toBe("rate_limited");
      expect(Number(fourth.headers.get("retry-after"))).toBeGreaterThan(0);
      expect((await limited.request("GET", "/applications", { token: bob })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe("operational endpoints", () => {
  it("serves /healthz and /readyz without a token", async () => {
    expect((await t.request("GET", "/healthz", { token: null })).body).toEqual({ status: "ok" });
    const ready = await t.request("GET", "/readyz", { token: null });
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: "ready" });
  });

  it("serves Prometheus metrics, guarded by METRICS_TOKEN when set", async () => {
    await t.request("GET", "/applications");
    const open = await t.request("GET", "/metrics", { token: null });
    expect(open.status).toBe(200);
    expect(open.text).toMatch(
      /http_request_duration_seconds_count\{method="GET",route="\/applications",status="200"\} \d+/,
    );
    const guarded = await startTestApp({ METRICS_TOKEN: "scrape-me" });
    try {
      expect((await guarded.request("GET", "/metrics", { token: null })).status).toBe(401);
      expect((await guarded.request("GET", "/metrics", { token: "wrong" })).status).toBe(401);
      expect((await guarded.request("GET", "/metrics", { token: "scrape-me" })).status).toBe(200);
    } finally {
      await guarded.close();
    }
  });
});
