// The service process is killed (SIGKILL) with deliveries in flight and started again: every
// committed event still reaches the receiver, a rolled-back one never does. The child process trusts
// the receiver's self-signed certificate only through NODE_EXTRA_CA_CERTS, so this also proves the
// production TLS path honours it.
import type { ChildProcess } from "node:child_process";
import { openDatabase, type Database } from "../../src/db/client.ts";
import { recordEvent } from "../../src/events/outbox.ts";
import { newId } from "../../src/ids.ts";
import { verifyWebhookDelivery } from "appsec-service/webhook-verify";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startHttpsReceiver, type HttpsReceiver } from "../helpers/https-receiver.ts";
import { createSelfSignedCert, type SelfSignedCert } from "../helpers/self-signed-cert.ts";
import { startServiceProcess } from "../helpers/service-process.ts";
import { TEST_JWT_SECRET, TEST_WEBHOOK_SECRET_KEYS, testSecretBox } from "../helpers/test-app.ts";

const SECRET = "crash-test-secret";

let testDb: TestDatabase;
let db: Database;
let cert: SelfSignedCert;
let receiver: HttpsReceiver;
let service: ChildProcess | undefined;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = openDatabase(testDb.url, testDb.options);
  cert = createSelfSignedCert();
  receiver = await startHttpsReceiver(cert);
});

afterAll(async () => {
  if (service && service.exitCode === null && service.signalCode === null) service.kill("SIGKILL");
  await receiver.close();
  await db.close();
  await testDb.drop();
  cert.remove();
});

const startService = async (): Promise<ChildProcess> =>
  (
    await startServiceProcess({
      env: {
        DATABASE_URL: testDb.url,
        NODE_ENV: "test",
        AUTH_JWT_SECRET: TEST_JWT_SECRET,
        WEBHOOK_SECRET_KEYS: TEST_WEBHOOK_SECRET_KEYS,
        NODE_EXTRA_CA_CERTS: cert.certPath,
        WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
        WEBHOOK_TIMEOUT_MS: "1000", // leases last twice this + 5 s
        WEBHOOK_RETRY_INITIAL_MS: "50",
        WEBHOOK_RETRY_MAX_DELAY_MS: "200",
        WEBHOOK_RETRY_WINDOW_MS: "30000",
      },
    })
  ).child;

const emit = () =>
  db.prisma.$transaction((tx) =>
    recordEvent(tx, "vulnerability.created", {
      id: newId(),
      severity: "high",
      applicationId: newId(),
      title: "SQL injection",
      createdAt: new Date().toISOString(),
    }),
  );

it("delivers every committed event at least once across a SIGKILL, and nothing for a rolled-back one", async () => {
  const now = new Date();
  const id = newId();
  const sealedSecret = testSecretBox().seal(SECRET, id);
  await db.prisma.webhook.create({
    data: {
      id,
      name: "crash",
      url: receiver.url("/crash"),
      events: ["vulnerability.created"],
      sealedSecret,
      status: "active",
      createdAt: now,
      updatedAt: now,
    },
  });
  // Not answered before the kill, however late it comes: no attempt of this process is delivered.
  receiver.answer = () => ({ status: 200, delayMs: 60_000 });

  service = await startService();
  const committed = new Set<string>();
  for (let i = 0; i < 20; i++) committed.add(await emit());
  let rolledBack: string | undefined;
  await expect(
    db.prisma.$transaction(async (tx) => {
      rolledBack = await recordEvent(tx, "vulnerability.created", {
        id: newId(),
        severity: "low",
        applicationId: newId(),
        title: "rolled back",
        createdAt: now.toISOString(),
      });
      throw new Error("the change fails");
    }),
  ).rejects.toThrow("the change fails");

  // Kill the process once its first attempts reach the receiver.
  await receiver.waitFor((reqs) => reqs.length > 0, 10_000);
  service.kill("SIGKILL");
  await new Promise((resolve) => service!.once("exit", resolve));
  const inFlightAtCrash = new Set(receiver.requests.map((r) => r.headers["x-webhook-id"] as string));
  expect(inFlightAtCrash.size).toBeGreaterThan(0);

  for (let i = 0; i < 10; i++) committed.add(await emit()); // committed while no service runs

  receiver.answer = () => ({ status: 200 });
  service = await startService();
  const received = () => new Set(receiver.requests.map((r) => JSON.parse(r.rawBody.toString()).eventId as string));
  await receiver.waitFor(() => [...committed].every((id) => received().has(id)), 20_000);

  expect(received()).toEqual(committed); // all 30 committed events, and nothing else
  expect(rolledBack).toBeDefined();
  expect(received().has(rolledBack!)).toBe(false);
  for (const req of receiver.requests)
    verifyWebhookDelivery({ rawBody: req.rawBody, secret: SECRET, headers: req.headers });
  // The database agrees once the restarted process has recorded its attempts,
  // including those taken over after the crashed process's leases expired.
  const deadline = Date.now() + 10_000;
  while ((await db.prisma.webhookDelivery.count({ where: { status: "delivered" } })) < 30 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(await db.prisma.webhookDelivery.count({ where: { status: "delivered" } })).toBe(30);
  expect(await db.prisma.webhookDelivery.count()).toBe(30);

  // The attempts cut short by the crash were taken over after their leases expired and sent again
  // under the same delivery id.
  for (const id of inFlightAtCrash) {
    expect(receiver.requests.filter((r) => r.headers["x-webhook-id"] === id).length).toBeGreaterThanOrEqual(2);
  }
  service.kill("SIGKILL");
  await new Promise((resolve) => service!.once("exit", resolve));
}, 60_000);
