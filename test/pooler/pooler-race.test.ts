// Two instances of the service behind PgBouncer in transaction mode (the pooler project's global
// set-up starts it), on one database: 10,000 events committed from both while both dispatchers
// claim and send their deliveries through the pooler's server connections. Every delivery reaches
// the receiver once, every row ends delivered, and no lease or pending row is left behind.
import { DISPATCHER_NAME } from "../../src/dispatcher/dispatcher.ts";
import { recordEvents } from "../../src/events/outbox.ts";
import { newId } from "../../src/ids.ts";
import { poolerTransactions } from "../helpers/database.ts";
import { sampleEvent } from "../helpers/sample-events.ts";
import { startHttpsReceiver, type HttpsReceiver } from "../helpers/https-receiver.ts";
import { createSelfSignedCert, type SelfSignedCert } from "../helpers/self-signed-cert.ts";
import { dispatcherTrusting, startTestApp, type TestApp } from "../helpers/test-app.ts";

const EVENTS = 10_000;
const BATCH = 250;

let cert: SelfSignedCert;
let receiver: HttpsReceiver;
let a: TestApp;
let b: TestApp;

beforeAll(async () => {
  cert = createSelfSignedCert();
  receiver = await startHttpsReceiver(cert);
  const env = { WEBHOOK_ALLOW_PRIVATE_TARGETS: "true" };
  a = await startTestApp(env);
  b = await startTestApp(env, { database: a.database });
});

afterAll(async () => {
  await b?.close();
  await a?.close();
  await receiver?.close();
  cert?.remove();
});

it("delivers each of 10,000 events once with two instances racing through the pooler, nothing stuck", async () => {
  expect(new URL(a.database.url).port).not.toBe(new URL(a.database.directUrl).port);
  const hook = await a.request("POST", "/webhooks", {
    body: { name: "race", url: receiver.url("/race"), events: ["vulnerability.created"], secret: "race-secret" },
  });
  expect(hook.status).toBe(201);
  const before = await poolerTransactions(a.database);

  const dispatchers = [a, b].map((t) => {
    const d = dispatcherTrusting(t, cert.cert);
    expect(d.name).toBe(DISPATCHER_NAME);
    d.start();
    return d;
  });
  try {
    // Committed from both instances, a batch per transaction, while the dispatchers already send.
    const committed = new Set<string>();
    const batches = Array.from({ length: EVENTS / BATCH }, (_, i) => (i % 2 === 0 ? a : b));
    await Promise.all(
      [a, b].map(async (t) => {
        for (const _ of batches.filter((x) => x === t)) {
          const ids = await t.app.db.prisma.$transaction((tx) =>
            recordEvents(
              tx,
              Array.from({ length: BATCH }, (_, n) => sampleEvent("vulnerability.created", newId(), n)),
            ),
          );
          for (const id of ids) committed.add(id);
        }
      }),
    );
    expect(committed.size).toBe(EVENTS);

    const delivered = () => new Set(receiver.requests.map((r) => JSON.parse(r.rawBody.toString()).eventId as string));
    await receiver.waitFor(() => receiver.requests.length >= EVENTS && delivered().size >= EVENTS, 120_000);
    // Nothing more arrives: no delivery was sent twice.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(receiver.requests).toHaveLength(EVENTS);
    expect(new Set(receiver.requests.map((r) => r.headers["webhook-id"])).size).toBe(EVENTS);
    expect(delivered()).toEqual(committed);

    // Both instances sent some of them.
    const sentBy = await Promise.all(
      [a, b].map(async (t) => {
        const metric = await t.app.metrics.webhookDeliveries.get();
        return metric.values.find((v) => v.labels.outcome === "delivered")?.value ?? 0;
      }),
    );
    expect(sentBy[0]! + sentBy[1]!).toBe(EVENTS);
    expect(Math.min(...sentBy)).toBeGreaterThan(0);
  } finally {
    await Promise.all(dispatchers.map((d) => d.stop()));
  }

  // Every row delivered, after one attempt; no lease held, nothing pending.
  const { rows } = await a.app.db.pool.query<{ status: string; attempts: number; n: number; leased: number }>(
    `SELECT status::text, attempt_count AS attempts, count(*)::int AS n, count(lease_owner)::int AS leased
       FROM webhook_deliveries GROUP BY 1, 2`,
  );
  expect(rows).toEqual([{ status: "delivered", attempts: 1, n: EVENTS, leased: 0 }]);
  const { rows: unnumbered } = await a.app.db.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM events WHERE position IS NULL",
  );
  expect(unnumbered[0]!.n).toBe(0);

  // And it all went through PgBouncer.
  expect((await poolerTransactions(a.database)) - before).toBeGreaterThan((2 * EVENTS) / BATCH);
}, 180_000);
