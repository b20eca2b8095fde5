// Postgres going away under load (docs/spec/CONTRACT.md §15), with a Postgres server of this test's own (an
// embedded one it starts, stops and starts again): no 500, every operation that needs the database
// answered 503 + Retry-After within 5 s (GraphQL: UNAVAILABLE), /readyz 503, serving again by itself
// within 5 s of Postgres returning, one log line each way, and no event lost (subscribers get each
// once, webhooks at least once).
import { rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Client } from "graphql-ws";
import pg from "pg";
import pino from "pino";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../../src/db/embedded.ts";
import { migrate } from "../../src/db/migrate.ts";
import type { WebhookDispatcher } from "../../src/dispatcher/dispatcher.ts";
import { wsClient } from "../helpers/graphql.ts";
import { startHttpsReceiver, type HttpsReceiver } from "../helpers/https-receiver.ts";
import { eventually } from "../helpers/scan-engines.ts";
import { createSelfSignedCert, type SelfSignedCert } from "../helpers/self-signed-cert.ts";
import { freePort } from "../helpers/service-process.ts";
import { dispatcherTrusting, startTestApp, type TestApp } from "../helpers/test-app.ts";

const ANSWER_WITHIN_MS = 5000;
const BACK_WITHIN_MS = 5000;

let dataDir: string;
let port: number;
let server: EmbeddedDatabase;
let cert: SelfSignedCert;
let receiver: HttpsReceiver;
let t: TestApp;
let dispatcher: WebhookDispatcher;
const logLines: { level: number; msg: string; err?: unknown }[] = [];

const startServer = () => startEmbeddedPostgres({ dataDir, port, database: "outage", persistent: true });

beforeAll(async () => {
  dataDir = path.join(os.tmpdir(), `appsec-outage-${process.pid}-${Date.now()}`);
  port = await freePort();
  server = await startServer();
  const pool = new pg.Pool({ connectionString: server.url, max: 1 });
  await migrate(pool);
  await pool.end();
  cert = createSelfSignedCert();
  receiver = await startHttpsReceiver(cert);
  const log = pino({ level: "info" }, { write: (line: string) => void logLines.push(JSON.parse(line)) });
  t = await startTestApp(
    {
      SCAN_DURATION_MS: "100",
      SCAN_LEASE_MS: "1000",
      WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
      WEBHOOK_RETRY_INITIAL_MS: "200",
      WEBHOOK_RETRY_MAX_DELAY_MS: "500",
    },
    {
      log,
      database: {
        url: server.url,
        directUrl: server.url,
        env: { DATABASE_URL: server.url },
        options: {},
        drop: async () => {},
      },
      workers: ["scan-runner", "event-retention"],
    },
  );
  // The instance's dispatcher, but trusting the receiver's certificate.
  dispatcher = dispatcherTrusting(t, cert.cert, { health: t.app.health });
  dispatcher.start();
}, 120_000);

afterAll(async () => {
  await dispatcher?.stop();
  await t?.close();
  await receiver?.close();
  cert?.remove();
  await server?.stop().catch(() => {});
  rmSync(dataDir, { recursive: true, force: true });
});

interface Answer {
  route: string;
  started: number;
  took: number;
  status: number;
  code?: string;
  retryAfter: string | null;
  unexpected: boolean;
}

it("answers 503 within 5 s while Postgres is away, never 500, and is back by itself within 5 s of its return, losing no event", async () => {
  const webhook = await t.request("POST", "/webhooks", {
    body: { name: "outage", url: receiver.url("/outage"), events: ["scan.completed"], secret: "outage-secret" },
  });
  expect(webhook.status).toBe(201);
  const apps: string[] = [];
  for (let i = 0; i < 4; i++)
    apps.push((await t.request("POST", "/applications", { body: { name: `outage-${i}` } })).body.id);

  // A live subscriber, there from before the outage to after it.
  const live: { eventId: string }[] = [];
  const subscriber: Client = wsClient(t, { authorization: `Bearer ${await t.token()}` });
  subscriber.subscribe<{ events: { eventId: string } }>(
    { query: "subscription { events(types: [SCAN_STARTED, SCAN_COMPLETED]) { eventId } }" },
    { next: ({ data }) => void live.push(data!.events), error: () => {}, complete: () => {} },
  );
  await t.app.events.listening();

  const gqlBody = (query: string, variables?: object) => ({ body: { query, variables } });
  const scanTypes = ["sast", "sca", "dast", "container"];
  let n = 0;
  const routes: [string, () => Promise<{ status: number; headers: Headers; body: any }>][] = [
    ["GET /applications", () => t.request("GET", "/applications?limit=5")],
    [
      "POST scans",
      () =>
        t.request("POST", `/applications/${apps[n % 4]}/scans`, {
          body: { scanType: scanTypes[Math.floor(n / 4) % 4] },
        }),
    ],
    ["GET /events", () => t.request("GET", "/events?limit=5")],
    ["GET deliveries", () => t.request("GET", `/webhooks/${webhook.body.id}/deliveries?limit=5`)],
    [
      "GraphQL query",
      () =>
        t.request(
          "POST",
          "/graphql",
          gqlBody("{ applications(first: 3) { totalCount edges { node { name latestScans { status } } } } }"),
        ),
    ],
    [
      "GraphQL mutation",
      () =>
        t.request(
          "POST",
          "/graphql",
          gqlBody("mutation($i: CreateApplicationInput!) { createApplication(input: $i) { id } }", {
            i: { name: `g-${Date.now()}-${n}` },
          }),
        ),
    ],
    ["/readyz", () => t.request("GET", "/readyz", { token: null })],
    ["/healthz", () => t.request("GET", "/healthz", { token: null })],
  ];
  const answers: Answer[] = [];
  let loading = true;
  const load = Promise.all(
    [0, 1, 2].map(async () => {
      while (loading) {
        const [route, send] = routes[n++ % routes.length]!;
        const started = Date.now();
        const res = await send();
        const body = res.body ?? {};
        answers.push({
          route,
          started,
          took: Date.now() - started,
          status: res.status,
          code: body.code ?? body.errors?.[0]?.extensions?.code,
          retryAfter: res.headers.get("retry-after"),
          unexpected: /INTERNAL_SERVER_ERROR|Unexpected error/.test(JSON.stringify(body)),
        });
        await new Promise((r) => setTimeout(r, 15));
      }
    }),
  );

  await new Promise((r) => setTimeout(r, 1500));
  const stopping = Date.now();
  await server.stop();
  const stopped = Date.now();
  await new Promise((r) => setTimeout(r, 4000));
  server = await startServer();
  const restarted = Date.now();
  await new Promise((r) => setTimeout(r, BACK_WITHIN_MS + 1500));
  loading = false;
  await load;

  const needsDatabase = (a: Answer) => a.route !== "/healthz";
  const ok = (a: Answer) => a.status < 400 || a.status === 409; // a conflicting scan is a fine answer
  // Never a 500 (nor a masked unexpected GraphQL error), and every answer within 5 s.
  expect(answers.filter((a) => (a.status >= 500 && a.status !== 503) || a.unexpected)).toEqual([]);
  expect(answers.filter((a) => a.took > ANSWER_WITHIN_MS)).toEqual([]);
  // Each 503 says why and when to come back.
  for (const a of answers.filter((x) => x.status === 503)) {
    expect(a.retryAfter).toMatch(/^\d+$/);
    if (a.route !== "/readyz") expect(a.code).toBe(a.route.startsWith("GraphQL") ? "UNAVAILABLE" : "unavailable");
  }
  // While it is away: 503 for everything that needs it.
  const during = answers.filter((a) => a.started > stopped + 200 && a.started + a.took < restarted);
  expect(during.filter(needsDatabase).length).toBeGreaterThan(20);
  expect(during.filter(needsDatabase).filter((a) => a.status !== 503)).toEqual([]);
  expect(during.filter((a) => a.route === "/healthz").every((a) => a.status === 200)).toBe(true);
  // Back by itself: every route answers again within 5 s of Postgres returning, and keeps doing so.
  for (const [route] of routes) {
    const firstOk = answers.find((a) => a.route === route && a.started >= restarted && ok(a));
    expect({ route, back: firstOk && firstOk.started + firstOk.took - restarted < BACK_WITHIN_MS }).toEqual({
      route,
      back: true,
    });
  }
  expect(answers.filter((a) => a.started > restarted + BACK_WITHIN_MS && !ok(a))).toEqual([]);
  // Before: everything answered before the stop began was fine (one in flight as it stops may be a 503).
  expect(answers.filter((a) => a.started + a.took < stopping && !ok(a))).toEqual([]);

  // One line when it went, one when it came back; not one per request, nor a stack trace.
  const messages = logLines.map((l) => l.msg);
  expect(messages.filter((m) => m.startsWith("database unreachable"))).toHaveLength(1);
  expect(messages.filter((m) => m === "database reachable again")).toHaveLength(1);
  expect(logLines.filter((l) => l.level >= 50)).toEqual([]);
  expect(logLines.filter((l) => l.level === 40 && !l.msg.startsWith("database unreachable"))).toEqual([]);

  // Nothing lost: every scan ends; the live subscriber got each of their events once, the webhook at least once.
  await eventually(
    async () => (await t.app.db.prisma.scan.count({ where: { status: { in: ["queued", "running"] } } })) === 0,
    30_000,
  );
  const events = await t.app.db.prisma.event.findMany({
    where: { type: { in: ["scan.started", "scan.completed"] } },
    select: { id: true, type: true },
  });
  expect(events.length).toBeGreaterThan(4);
  await eventually(async () => live.length >= events.length, 15_000);
  expect(live.map((e) => e.eventId).sort()).toEqual(events.map((e) => e.id).sort());
  const completed = events.filter((e) => e.type === "scan.completed").map((e) => e.id);
  await receiver.waitFor(
    (requests) => completed.every((id) => requests.some((r) => JSON.parse(r.rawBody.toString()).eventId === id)),
    30_000,
  );
  await subscriber.dispose();
  // Every LISTEN is back (the instance's one, which its scan runner and live feed share, and this
  // test's dispatcher's own), and no connection is left held by a transaction that died with the old
  // server (the pool would run dry after a few outages): none of the pool's is still out.
  const listening = async () =>
    (
      await t.app.db.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'",
      )
    ).rows[0]!.n;
  await eventually(async () => (await listening()) === 2);
  await eventually(async () => t.app.db.pool.totalCount - t.app.db.pool.idleCount === 0);
}, 120_000);
