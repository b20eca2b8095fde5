// The webhook dispatcher against a real HTTPS receiver (self-signed certificate, trusted through the
// dispatcher's test-only `tls.ca` seam; the crash test proves the production path trusts
// NODE_EXTRA_CA_CERTS). Time is compressed by configuration and passes are driven with runOnce().
import { randomBytes } from "node:crypto";
import { Webhook as StandardWebhook } from "standardwebhooks";
import type { DispatcherOptions, WebhookDispatcher } from "../../src/dispatcher/dispatcher.ts";
import { fanOutEvents } from "../../src/dispatcher/fan-out.ts";
import { createSecretBox } from "../../src/domain/webhooks/secret-box.ts";
import type { ResolveAll } from "../../src/net/ssrf-guard.ts";
import type { EventType } from "../../src/events/catalog.ts";
import { recordEvent } from "../../src/events/outbox.ts";
import type { WebhookStatus } from "../../src/generated/prisma/client.ts";
import { newId } from "../../src/ids.ts";
import { verifyWebhookDelivery, WebhookVerificationError } from "appsec-service/webhook-verify";
import { startHttpsReceiver, type HttpsReceiver } from "../helpers/https-receiver.ts";
import { createSelfSignedCert, type SelfSignedCert } from "../helpers/self-signed-cert.ts";
import { dispatcherTrusting, startTestApp, type TestApp } from "../helpers/test-app.ts";

const SECRET = "whsec-test-sécret-0123456789"; // non-ASCII on purpose: keys are the UTF-8 bytes

let t: TestApp;
let cert: SelfSignedCert;
let receiver: HttpsReceiver;
const dispatchers: WebhookDispatcher[] = [];

beforeAll(async () => {
  cert = createSelfSignedCert();
  t = await startTestApp({
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
    WEBHOOK_TIMEOUT_MS: "300",
    WEBHOOK_RETRY_INITIAL_MS: "50",
    WEBHOOK_RETRY_MAX_DELAY_MS: "200",
    WEBHOOK_RETRY_WINDOW_MS: "1200",
  });
  receiver = await startHttpsReceiver(cert);
});

afterEach(async () => {
  await Promise.all(dispatchers.splice(0).map((d) => d.stop()));
  // Each test starts with no live subscription; leftovers of earlier tests get cancelled.
  await t.app.db.prisma.webhook.updateMany({ data: { status: "disabled" } });
  receiver.requests.length = 0;
  receiver.answer = () => ({ status: 200 });
});

afterAll(async () => {
  await receiver.close();
  await t.close();
  cert.remove();
});

function dispatcher(overrides: Partial<DispatcherOptions> = {}): WebhookDispatcher {
  const d = dispatcherTrusting(t, cert.cert, overrides);
  dispatchers.push(d);
  return d;
}

async function createWebhook(url: string, events: EventType[] = ["scan.completed"], status: WebhookStatus = "active") {
  const now = new Date();
  const id = newId();
  const sealedSecret = t.app.webhookSecrets.seal(SECRET, id);
  return t.app.db.prisma.webhook.create({
    data: { id, name: `hook-${now.getTime()}`, url, events, sealedSecret, status, createdAt: now, updatedAt: now },
  });
}

const scanData = (id = newId()) => ({
  id,
  applicationId: newId(),
  scanType: "sast",
  status: "completed",
  triggeredBy: "ci",
  startedAt: "2026-11-21T10:00:00.000Z",
  completedAt: "2026-11-21T10:01:00.000Z",
  summary: { totalFindings: 1, critical: 0, high: 1, medium: 0, low: 0 },
});

const emit = (type: EventType = "scan.completed") =>
  t.app.db.prisma.$transaction((tx) => recordEvent(tx, type, scanData() as never));

const deliveriesOf = (webhookId: string) =>
  t.app.db.prisma.webhookDelivery.findMany({
    where: { webhookId },
    include: { attempts: { orderBy: { attemptedAt: "asc" } } },
    orderBy: { createdAt: "asc" },
  });

/** Runs passes until `done` holds (retries are due after tens of milliseconds), within a bound. */
async function driveUntil(d: WebhookDispatcher, done: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await d.runOnce();
    if (await done()) return;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const header = (req: { headers: Record<string, unknown> }, name: string) => req.headers[name] as string;

describe("delivery request", () => {
  it("is signed so that the project's helper and a Standard Webhooks library both verify it", async () => {
    const hook = await createWebhook(receiver.url("/signed"));
    const eventId = await emit();
    expect(await dispatcher().runOnce()).toEqual({ fannedOut: 1, attempted: 1 });

    expect(receiver.requests).toHaveLength(1);
    const req = receiver.requests[0]!;
    const [delivery] = await deliveriesOf(hook.id);
    expect(delivery).toMatchObject({
      status: "delivered",
      eventId,
      attemptCount: 1,
      nextAttemptAt: null,
      leaseOwner: null,
    });
    expect(delivery!.attempts).toMatchObject([{ statusCode: 200, error: null, nextAttemptAt: null }]);

    expect(header(req, "x-webhook-id")).toBe(delivery!.id);
    expect(header(req, "webhook-id")).toBe(delivery!.id);
    expect(header(req, "x-webhook-event")).toBe("scan.completed");
    expect(header(req, "content-type")).toBe("application/json");
    expect(header(req, "user-agent")).toMatch(/^appsec-service-webhooks\//);
    expect(Math.abs(Number(header(req, "x-webhook-timestamp")) - Date.now() / 1000)).toBeLessThan(5);
    expect(header(req, "x-webhook-signature")).toMatch(/^sha256=[0-9a-f]{64}$/);

    const verified = verifyWebhookDelivery({ rawBody: req.rawBody, secret: SECRET, headers: req.headers });
    expect(verified).toMatchObject({
      eventId,
      eventType: "scan.completed",
      data: { scanType: "sast", status: "completed" },
    });
    expect(Object.keys(JSON.parse(req.rawBody.toString()))).toEqual([
      "eventId",
      "eventType",
      "timestamp",
      "signature",
      "data",
    ]);
    // data arrives with the keys in the order the event was written (the catalogue's order)
    expect(Object.keys(JSON.parse(req.rawBody.toString()).data)).toEqual(Object.keys(scanData()));

    const standard = new StandardWebhook(Buffer.from(SECRET, "utf8"), { format: "raw" });
    expect(standard.verify(req.rawBody.toString("utf8"), req.headers as Record<string, string>)).toMatchObject({
      eventId,
    });

    // Both reject a tampered body or the wrong secret.
    const tampered = Buffer.from(req.rawBody.toString().replace('"sast"', '"dast"'));
    expect(() => verifyWebhookDelivery({ rawBody: tampered, secret: SECRET, headers: req.headers })).toThrow(
      WebhookVerificationError,
    );
    expect(() => standard.verify(tampered.toString(), req.headers as Record<string, string>)).toThrow();
    expect(() => verifyWebhookDelivery({ rawBody: req.rawBody, secret: "other", headers: req.headers })).toThrow(
      WebhookVerificationError,
    );
  });

  it("goes only to subscriptions that are listening for the type and not disabled", async () => {
    const listening = await createWebhook(receiver.url("/listening"), ["scan.completed", "scan.failed"]);
    const inError = await createWebhook(receiver.url("/in-error"), ["scan.failed"], "error");
    const otherType = await createWebhook(receiver.url("/other-type"), ["vulnerability.created"]);
    const disabled = await createWebhook(receiver.url("/disabled"), ["scan.failed"], "disabled");
    await emit("scan.failed");
    await dispatcher().runOnce();

    expect(receiver.requests.map((r) => r.path).sort()).toEqual(["/in-error", "/listening"]);
    expect(await deliveriesOf(listening.id)).toHaveLength(1);
    expect(await deliveriesOf(inError.id)).toHaveLength(1);
    expect(await deliveriesOf(otherType.id)).toHaveLength(0);
    expect(await deliveriesOf(disabled.id)).toHaveLength(0);
    // A success turns an `error` subscription active again.
    expect((await t.app.db.prisma.webhook.findUniqueOrThrow({ where: { id: inError.id } })).status).toBe("active");
  });

  it("sends nothing for a rolled-back change", async () => {
    const hook = await createWebhook(receiver.url("/rollback"));
    await expect(
      t.app.db.prisma.$transaction(async (tx) => {
        await recordEvent(tx, "scan.completed", scanData() as never);
        throw new Error("the change fails");
      }),
    ).rejects.toThrow("the change fails");
    expect(await dispatcher().runOnce()).toEqual({ fannedOut: 0, attempted: 0 });
    expect(receiver.requests).toHaveLength(0);
    expect(await deliveriesOf(hook.id)).toHaveLength(0);
  });
});

describe("outcomes", () => {
  it("retries 5xx with backoff, with the same X-Webhook-Id, until a 2xx", async () => {
    const hook = await createWebhook(receiver.url("/flaky"));
    receiver.answer = (_, n) => ({ status: n === 1 ? 500 : n === 2 ? 503 : 204 });
    await emit();
    const d = dispatcher();
    await driveUntil(d, async () => (await deliveriesOf(hook.id))[0]?.status === "delivered");

    const [delivery] = await deliveriesOf(hook.id);
    expect(receiver.requests).toHaveLength(3);
    expect(new Set(receiver.requests.map((r) => header(r, "x-webhook-id")))).toEqual(new Set([delivery!.id]));
    for (const req of receiver.requests)
      verifyWebhookDelivery({ rawBody: req.rawBody, secret: SECRET, headers: req.headers });
    expect(delivery!.attempts.map((a) => a.statusCode)).toEqual([500, 503, 204]);
    const [first, second, third] = delivery!.attempts;
    // The first retry comes after about WEBHOOK_RETRY_INITIAL_MS (50 ms, jitter shortens by ≤ 20 %).
    const firstDelay = first!.nextAttemptAt!.getTime() - first!.attemptedAt.getTime();
    expect(firstDelay).toBeGreaterThanOrEqual(40);
    expect(firstDelay).toBeLessThan(50 + first!.durationMs + 50);
    expect(second!.attemptedAt.getTime()).toBeGreaterThanOrEqual(first!.nextAttemptAt!.getTime());
    expect(third!.nextAttemptAt).toBeNull();
    expect(delivery!.firstAttemptAt).toEqual(first!.attemptedAt);
  });

  it.each([
    [404, {}],
    [410, {}],
    [302, { location: "/redirected" }],
  ])("drops a %i without retrying (and follows no redirect)", async (status, headers) => {
    const hook = await createWebhook(receiver.url("/refuses"));
    receiver.answer = () => ({ status, headers });
    await emit();
    const d = dispatcher();
    await d.runOnce();
    const [delivery] = await deliveriesOf(hook.id);
    expect(delivery).toMatchObject({ status: "dropped", nextAttemptAt: null, attemptCount: 1 });
    expect(delivery!.attempts).toMatchObject([{ statusCode: status, error: null, nextAttemptAt: null }]);
    expect(await d.runOnce()).toEqual({ fannedOut: 0, attempted: 0 });
    expect(receiver.requests.map((r) => r.path)).toEqual(["/refuses"]);
  });

  it("retries a timeout", async () => {
    const hook = await createWebhook(receiver.url("/slow"));
    receiver.answer = (_, n) => ({ status: 200, delayMs: n === 1 ? 1000 : 0 });
    await emit();
    const d = dispatcher();
    await driveUntil(d, async () => (await deliveriesOf(hook.id))[0]?.status === "delivered");
    const [delivery] = await deliveriesOf(hook.id);
    expect(delivery!.attempts).toMatchObject([
      { statusCode: null, error: expect.stringMatching(/^timeout/) },
      { statusCode: 200, error: null },
    ]);
    expect(delivery!.attempts[0]!.durationMs).toBeGreaterThanOrEqual(290);
    expect(delivery!.attempts[0]!.durationMs).toBeLessThan(1000);
    expect(new Set(receiver.requests.map((r) => header(r, "x-webhook-id")))).toEqual(new Set([delivery!.id]));
  });

  it("retries a refused connection", async () => {
    const hook = await createWebhook("https://127.0.0.1:1/closed");
    await emit();
    const d = dispatcher();
    await d.runOnce();
    const [delivery] = await deliveriesOf(hook.id);
    expect(delivery).toMatchObject({ status: "pending" });
    expect(delivery!.attempts).toMatchObject([{ statusCode: null, error: expect.stringMatching(/^connection/) }]);
    expect(delivery!.attempts[0]!.nextAttemptAt).not.toBeNull();
  });

  it("sends nothing unsigned when no configured key opens the secret, and retries once the key is back", async () => {
    const hook = await createWebhook(receiver.url("/unopenable"));
    await emit();
    const otherKeys = createSecretBox([randomBytes(32)]);
    await dispatcher({ webhookSecrets: otherKeys }).runOnce();
    expect(receiver.requests).toHaveLength(0);
    const [delivery] = await deliveriesOf(hook.id);
    expect(delivery).toMatchObject({ status: "pending" });
    expect(delivery!.attempts).toMatchObject([
      { statusCode: null, error: expect.stringMatching(/^secret_unavailable: no configured WEBHOOK_SECRET_KEYS key/) },
    ]);

    await t.app.db.pool.query("UPDATE webhook_deliveries SET next_attempt_at = now() WHERE id = $1", [delivery!.id]);
    await dispatcher().runOnce();
    expect(receiver.requests.map((r) => r.path)).toEqual(["/unopenable"]);
    expect(
      verifyWebhookDelivery({
        rawBody: receiver.requests[0]!.rawBody,
        secret: SECRET,
        headers: receiver.requests[0]!.headers,
      }),
    ).toBeDefined();
  });

  it("gives up after the retry window, turns the subscription `error`, and a later success turns it `active`", async () => {
    const hook = await createWebhook(receiver.url("/down"));
    receiver.answer = () => ({ status: 500 });
    await emit();
    const d = dispatcher();
    await driveUntil(d, async () => (await deliveriesOf(hook.id))[0]?.status === "failed");

    const [failed] = await deliveriesOf(hook.id);
    expect(failed!.attempts.length).toBeGreaterThanOrEqual(3);
    const last = failed!.attempts.at(-1)!;
    expect(last.nextAttemptAt).toBeNull();
    // Retries were scheduled only inside the window counted from the first attempt, and it gave up
    // only when the next retry (at most 200 ms away) would have fallen outside it.
    const giveUpAt = failed!.attempts[0]!.attemptedAt.getTime() + 1200;
    for (const a of failed!.attempts.slice(0, -1)) expect(a.nextAttemptAt!.getTime()).toBeLessThanOrEqual(giveUpAt);
    expect(last.attemptedAt.getTime() + last.durationMs).toBeGreaterThanOrEqual(giveUpAt - 200 - 5);
    expect((await t.app.db.prisma.webhook.findUniqueOrThrow({ where: { id: hook.id } })).status).toBe("error");

    receiver.answer = () => ({ status: 200 });
    await emit();
    await d.runOnce();
    expect((await deliveriesOf(hook.id)).map((x) => x.status)).toEqual(["failed", "delivered"]);
    expect((await t.app.db.prisma.webhook.findUniqueOrThrow({ where: { id: hook.id } })).status).toBe("active");
  });

  it("never re-enables a disabled subscription, and cancels its pending deliveries", async () => {
    const hook = await createWebhook(receiver.url("/disable-me"));
    receiver.answer = () => ({ status: 503 });
    await emit();
    const d = dispatcher();
    await d.runOnce();
    expect((await deliveriesOf(hook.id))[0]).toMatchObject({ status: "pending" });

    expect((await t.request("PUT", `/webhooks/${hook.id}`, { body: { status: "disabled" } })).status).toBe(200);
    receiver.answer = () => ({ status: 200 });
    await driveUntil(d, async () => (await deliveriesOf(hook.id))[0]?.status === "cancelled");
    expect(await d.runOnce()).toEqual({ fannedOut: 0, attempted: 0 });
    expect(receiver.requests).toHaveLength(1);
    const [delivery] = await deliveriesOf(hook.id);
    expect(delivery).toMatchObject({ nextAttemptAt: null, attemptCount: 1 });
    expect((await t.app.db.prisma.webhook.findUniqueOrThrow({ where: { id: hook.id } })).status).toBe("disabled");
  });
});

describe("disabling during an attempt", () => {
  it("keeps the delivery cancelled even when the in-flight attempt then succeeds, and counts no outcome for it", async () => {
    const hook = await createWebhook(receiver.url("/slow-then-disabled"));
    // The receiver answers 200 once the subscription is disabled: however long the PUT takes, the
    // attempt is still in flight when it commits (a fixed delay lost that race on a loaded machine).
    let disabled!: () => void;
    const whenDisabled = new Promise<void>((resolve) => (disabled = resolve));
    receiver.answer = () => ({ status: 200, after: whenDisabled });
    await emit();
    const outcomes = async () =>
      (await t.app.metrics.webhookDeliveries.get()).values.reduce((sum, v) => sum + v.value, 0);
    const countedBefore = await outcomes();
    const d = dispatcher({ config: { ...t.app.config, WEBHOOK_TIMEOUT_MS: 10_000 } });
    const pass = d.runOnce();
    await receiver.waitFor((reqs) => reqs.length === 1, 3000);
    expect((await t.request("PUT", `/webhooks/${hook.id}`, { body: { status: "disabled" } })).status).toBe(200);
    disabled();
    await pass;
    await driveUntil(d, async () => (await deliveriesOf(hook.id))[0]?.attempts.length === 1);
    const [delivery] = await deliveriesOf(hook.id);
    expect(delivery).toMatchObject({ status: "cancelled" });
    expect(delivery!.attempts[0]).toMatchObject({ statusCode: 200 });
    expect(await outcomes()).toBe(countedBefore);
  });
});

describe("SSRF guard at connect time (private targets not allowed)", () => {
  const classes: [string, string][] = [
    ["loopback", "127.0.0.1"],
    ["private-10", "10.1.2.3"],
    ["private-172", "172.16.5.4"],
    ["private-192", "192.168.1.1"],
    ["cgnat", "100.64.0.1"],
    ["link-local", "169.254.169.254"],
    ["multicast", "224.0.0.1"],
    ["unspecified", "0.0.0.0"],
    ["broadcast", "255.255.255.255"],
    ["ipv6-loopback", "::1"],
    ["ipv6-unique-local", "fd00::1"],
    ["ipv6-link-local", "fe80::1"],
    ["ipv6-multicast", "ff02::1"],
    ["ipv6-unspecified", "::"],
    ["ipv4-mapped-loopback", "::ffff:127.0.0.1"],
  ];
  // Every *.example.test name resolves to the address its first label names.
  const resolveAll: ResolveAll = (hostname, _options, callback) => {
    const address =
      hostname === "hook.example.test" ? "127.0.0.1" : classes.find(([name]) => hostname.startsWith(`${name}.`))?.[1];
    if (!address) return callback(Object.assign(new Error(`unknown ${hostname}`), { code: "ENOTFOUND" }), []);
    callback(null, [{ address, family: address.includes(":") ? 6 : 4 }]);
  };

  it("refuses every forbidden address class after DNS resolution, and drops without retrying", async () => {
    const hooks = await Promise.all(
      classes.map(([name]) => createWebhook(`https://${name}.example.test:${receiver.port}/ssrf`)),
    );
    await emit();
    const d = dispatcher({ config: { ...t.app.config, WEBHOOK_ALLOW_PRIVATE_TARGETS: false }, resolveAll });
    expect(await d.runOnce()).toMatchObject({ attempted: classes.length });

    expect(receiver.requests).toHaveLength(0);
    for (const [i, hook] of hooks.entries()) {
      const [delivery] = await deliveriesOf(hook.id);
      expect({ class: classes[i]![0], status: delivery!.status }).toEqual({ class: classes[i]![0], status: "dropped" });
      expect(delivery!.attempts[0]).toMatchObject({
        statusCode: null,
        error: expect.stringContaining(`forbidden_target: Refusing to connect to ${classes[i]![0]}.example.test`),
      });
    }
  });

  it("also refuses literal addresses and localhost names, which never reach DNS", async () => {
    const literal = await createWebhook(receiver.url("/literal"));
    const localhost = await createWebhook(`https://localhost.:${receiver.port}/localhost`);
    await emit();
    await dispatcher({ config: { ...t.app.config, WEBHOOK_ALLOW_PRIVATE_TARGETS: false } }).runOnce();
    expect(receiver.requests).toHaveLength(0);
    for (const hook of [literal, localhost]) {
      expect((await deliveriesOf(hook.id))[0]!.attempts).toMatchObject([
        { error: expect.stringMatching(/^forbidden_target: url must not point to/) },
      ]);
    }
  });

  it("connects through the same resolver when private targets are allowed (control)", async () => {
    const hook = await createWebhook(`https://hook.example.test:${receiver.port}/resolved`);
    await emit();
    await dispatcher({ resolveAll }).runOnce();
    expect(receiver.requests.map((r) => r.path)).toEqual(["/resolved"]);
    expect((await deliveriesOf(hook.id))[0]!.status).toBe("delivered");
  });
});

describe("claiming", () => {
  it("wakes on NOTIFY and attempts a committed event within milliseconds (polling is slow here)", async () => {
    await createWebhook(receiver.url("/notify"));
    const d = dispatcher({ pollIntervalMs: 60_000 });
    d.start();
    // Let the LISTEN take effect: the start-up pass finds nothing, after which only NOTIFY can wake it.
    await new Promise((r) => setTimeout(r, 200));
    const committedAt = Date.now();
    const eventId = await emit();
    await receiver.waitFor((reqs) => reqs.length === 1, 3000);
    expect(receiver.requests[0]!.receivedAt - committedAt).toBeLessThan(1000);
    expect(JSON.parse(receiver.requests[0]!.rawBody.toString()).eventId).toBe(eventId);
  });

  it("sends what is due while a fan-out is held up (a large transaction's events do not stall sending)", async () => {
    await createWebhook(receiver.url("/fan-out-held"));
    const queuedEvent = await emit();
    await fanOutEvents(t.app.db.pool, 10); // its delivery is due
    const laterEvent = await emit(); // committed, not yet fanned out
    const locker = await t.app.db.pool.connect();
    try {
      // Holds up every fan-out (its UPDATE of events waits), not the claim (which only reads events).
      await locker.query("BEGIN");
      await locker.query("LOCK TABLE events IN EXCLUSIVE MODE");
      dispatcher({ pollIntervalMs: 60_000 }).start();
      await receiver.waitFor((reqs) => reqs.length === 1, 3000);
      expect(JSON.parse(receiver.requests[0]!.rawBody.toString()).eventId).toBe(queuedEvent);
    } finally {
      await locker.query("ROLLBACK");
      locker.release();
    }
    await receiver.waitFor((reqs) => reqs.length === 2, 3000);
    expect(JSON.parse(receiver.requests[1]!.rawBody.toString()).eventId).toBe(laterEvent);
  });

  it("stop() lets an in-flight attempt finish, records it and holds no lease afterwards", async () => {
    const hook = await createWebhook(receiver.url("/stopping"));
    receiver.answer = () => ({ status: 200, delayMs: 150 });
    const d = dispatcher();
    d.start();
    await emit();
    await receiver.waitFor((reqs) => reqs.length === 1, 3000);
    // The lease comfortably outlasts one attempt (twice the 300 ms timeout + 5 s), claim-to-record waits included.
    const [leased] = await deliveriesOf(hook.id);
    expect(leased!.leaseExpiresAt!.getTime() - Date.now()).toBeGreaterThan(2 * 300 + 4000);
    await d.stop();
    const [delivery] = await deliveriesOf(hook.id);
    expect(delivery).toMatchObject({ status: "delivered", leaseOwner: null, leaseExpiresAt: null });
    expect(delivery!.attempts).toHaveLength(1);
  });

  it("stop() abandons an attempt still under way after its grace and hands the delivery back: another instance sends it at once", async () => {
    const hook = await createWebhook(receiver.url("/abandoned"));
    let hang = true;
    receiver.answer = () => (hang ? { status: 200, delayMs: 10_000 } : { status: 200 });
    const config = { ...t.app.config, WEBHOOK_TIMEOUT_MS: 10_000 }; // its lease: 25 s
    const stopping = dispatcher({ config });
    stopping.start();
    await emit();
    await receiver.waitFor((reqs) => reqs.length === 1, 3000);
    await stopping.stop();
    const [released] = await deliveriesOf(hook.id);
    expect(released).toMatchObject({ status: "pending", attemptCount: 0, leaseOwner: null, leaseExpiresAt: null });
    expect(released!.attempts).toHaveLength(0); // an abandoned attempt says nothing of the endpoint

    hang = false;
    expect(await dispatcher({ config }).runOnce()).toEqual({ fannedOut: 0, attempted: 1 });
    const [delivered] = await deliveriesOf(hook.id);
    expect(delivered).toMatchObject({ status: "delivered", attemptCount: 1 });
    expect(receiver.requests.map((r) => header(r, "x-webhook-id"))).toEqual([delivered!.id, delivered!.id]);
  });

  it("holds a timing-out endpoint to its floor while another's deliveries go out, retries its attempts on time, and lets it recover", async () => {
    await createWebhook(receiver.url("/blackholed"), ["scan.completed"]);
    const other = await createWebhook(receiver.url("/other"), ["scan.failed"]);
    receiver.answer = (req) => (req.path === "/blackholed" ? { status: 200, delayMs: 3000 } : { status: 200 });
    for (let i = 0; i < 20; i++) await emit("scan.completed");
    await fanOutEvents(t.app.db.pool, 100); // the slow subscription's deliveries are due first
    for (let i = 0; i < 10; i++) await emit("scan.failed");
    // A timeout long enough for the other's ten deliveries to go out while the first two hang.
    const config = { ...t.app.config, WEBHOOK_TIMEOUT_MS: 1500, WEBHOOK_RETRY_WINDOW_MS: 60_000 };
    const d = dispatcher({ config, concurrency: 6, endpointLimits: { min: 2, max: 8 } });
    const toSlow = () => receiver.requests.filter((r) => r.path === "/blackholed");

    const first = d.runOnce();
    await receiver.waitFor(() => toSlow().length === 2, 3000);
    // While its two attempts hang, further passes take none of its backlog, only the other's.
    await driveUntil(d, async () =>
      (await deliveriesOf(other.id)).every((delivery) => delivery.status === "delivered"),
    );
    expect(toSlow()).toHaveLength(2);

    // Both time out: it stays at its floor of two and backs off, so those two slots go to the two
    // retries as soon as they are due, not to its eighteen fresh deliveries.
    await first;
    const failing = new Set(toSlow().map((r) => header(r, "x-webhook-id")));
    receiver.answer = () => ({ status: 200 }); // it comes back
    await new Promise((r) => setTimeout(r, 60)); // the retries are due 40 to 50 ms after the timeouts
    expect(await d.runOnce()).toEqual({ fannedOut: 0, attempted: 2 });
    expect(
      new Set(
        toSlow()
          .slice(2)
          .map((r) => header(r, "x-webhook-id")),
      ),
    ).toEqual(failing);

    // Two timely answers: it is healthy again and its share grows by one per answer.
    expect(await d.runOnce()).toEqual({ fannedOut: 0, attempted: 4 });
  });

  it("lets several dispatchers run at once without sending a delivery twice", async () => {
    const hook = await createWebhook(receiver.url("/concurrent"));
    receiver.answer = () => ({ status: 200, delayMs: 20 });
    const eventIds = await Promise.all(Array.from({ length: 30 }, () => emit()));
    const ds = [dispatcher({ concurrency: 4 }), dispatcher({ concurrency: 4 }), dispatcher({ concurrency: 4 })];
    const deadline = Date.now() + 10_000;
    while ((await t.app.db.prisma.webhookDelivery.count({ where: { webhookId: hook.id, status: "delivered" } })) < 30) {
      if (Date.now() > deadline) throw new Error("not all delivered in time");
      await Promise.all(ds.map((d) => d.runOnce()));
    }
    const ids = receiver.requests.map((r) => header(r, "x-webhook-id"));
    expect(ids).toHaveLength(30);
    expect(new Set(ids).size).toBe(30);
    const received = receiver.requests.map((r) => JSON.parse(r.rawBody.toString()).eventId);
    expect(new Set(received)).toEqual(new Set(eventIds));
  });

  it("takes over a delivery whose lease expired (its owner crashed)", async () => {
    const hook = await createWebhook(receiver.url("/orphan"));
    await emit();
    await dispatcher().runOnce(); // delivered once; now pretend a crashed instance held a new one
    receiver.requests.length = 0;
    const [delivery] = await deliveriesOf(hook.id);
    const orphan = await t.app.db.prisma.webhookDelivery.create({
      data: {
        id: newId(),
        webhookId: hook.id,
        eventId: delivery!.eventId,
        nextAttemptAt: new Date(),
        createdAt: new Date(),
        updatedAt: new Date(),
        leaseOwner: "crashed",
        leaseExpiresAt: new Date(Date.now() + 300),
      },
    });
    const d = dispatcher();
    expect(await d.runOnce()).toEqual({ fannedOut: 0, attempted: 0 }); // still leased
    await driveUntil(d, async () => receiver.requests.length === 1);
    expect(header(receiver.requests[0]!, "x-webhook-id")).toBe(orphan.id);
  });
});

describe("delivery log and redelivery", () => {
  it("lists deliveries newest first with their attempts, paginated, and redelivers as a new delivery", async () => {
    const hook = await createWebhook(receiver.url("/log"));
    receiver.answer = (_, n) => ({ status: n === 1 ? 500 : 200 });
    const first = await emit();
    const d = dispatcher();
    await driveUntil(d, async () => (await deliveriesOf(hook.id))[0]?.status === "delivered");
    const second = await emit();
    await d.runOnce();

    const list = await t.request("GET", `/webhooks/${hook.id}/deliveries`, { token: await t.token(["webhooks:read"]) });
    expect(list.status).toBe(200);
    expect(list.body.map((x: { eventId: string }) => x.eventId)).toEqual([second, first]);
    const older = list.body[1];
    expect(older).toEqual({
      id: expect.any(String),
      eventId: first,
      eventType: "scan.completed",
      status: "delivered",
      createdAt: expect.any(String),
      nextAttemptAt: null,
      waiting: null,
      attempts: [
        { attemptedAt: expect.any(String), statusCode: 500, durationMs: expect.any(Number), error: null },
        { attemptedAt: expect.any(String), statusCode: 200, durationMs: expect.any(Number), error: null },
      ],
    });

    const page1 = await t.request("GET", `/webhooks/${hook.id}/deliveries?limit=1`);
    expect(page1.body.map((x: { eventId: string }) => x.eventId)).toEqual([second]);
    const next = /<([^>]+)>; rel="next"/.exec(page1.headers.get("link") ?? "")?.[1];
    expect(next).toBeDefined();
    const page2 = await t.request("GET", new URL(next!).pathname + new URL(next!).search);
    expect(page2.body.map((x: { eventId: string }) => x.eventId)).toEqual([first]);
    expect(page2.headers.get("link")).toBeNull();

    receiver.requests.length = 0;
    const redeliver = await t.request("POST", `/webhooks/${hook.id}/deliveries/${older.id}/redeliver`, {
      token: await t.token(["webhooks:write"]),
    });
    expect(redeliver.status).toBe(202);
    expect(redeliver.body).toMatchObject({
      eventId: first,
      eventType: "scan.completed",
      status: "pending",
      attempts: [],
    });
    expect(redeliver.body.id).not.toBe(older.id);
    expect(redeliver.headers.get("location")).toBe(`/webhooks/${hook.id}/deliveries/${redeliver.body.id}`);
    const located = await t.request("GET", redeliver.headers.get("location")!);
    expect(located.body).toMatchObject({ id: redeliver.body.id, eventId: first });

    await d.runOnce();
    expect(receiver.requests).toHaveLength(1);
    expect(header(receiver.requests[0]!, "x-webhook-id")).toBe(redeliver.body.id);
    expect(
      verifyWebhookDelivery({
        rawBody: receiver.requests[0]!.rawBody,
        secret: SECRET,
        headers: receiver.requests[0]!.headers,
      }).eventId,
    ).toBe(first);
  });

  it("refuses to redeliver to a disabled subscription: 409, and nothing is queued", async () => {
    const hook = await createWebhook(receiver.url("/disabled-redeliver"));
    await emit();
    await dispatcher().runOnce();
    const [delivery] = await deliveriesOf(hook.id);
    expect((await t.request("PUT", `/webhooks/${hook.id}`, { body: { status: "disabled" } })).status).toBe(200);
    const res = await t.request("POST", `/webhooks/${hook.id}/deliveries/${delivery!.id}/redeliver`);
    expect(res.status).toBe(409);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(res.body.code).toBe("conflict");
    expect(await deliveriesOf(hook.id)).toHaveLength(1);
  });

  it("queues no second copy while one is pending: 409, however many ask at once", async () => {
    const hook = await createWebhook(receiver.url("/pending-redeliver"));
    const eventId = await emit();
    await dispatcher().runOnce();
    const [delivered] = await deliveriesOf(hook.id);
    expect(delivered!.status).toBe("delivered");
    const path = `/webhooks/${hook.id}/deliveries/${delivered!.id}/redeliver`;
    const answers = await Promise.all([1, 2, 3].map(() => t.request("POST", path)));
    expect(answers.map((a) => a.status).sort()).toEqual([202, 409, 409]);
    const copy = answers.find((a) => a.status === 202)!.body.id;
    for (const refused of answers.filter((a) => a.status === 409)) {
      expect(refused.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(refused.body).toMatchObject({ code: "conflict", detail: expect.stringContaining(copy) });
    }
    // The pending copy itself is refused as well; once it was sent, another may be asked for.
    expect((await t.request("POST", `/webhooks/${hook.id}/deliveries/${copy}/redeliver`)).status).toBe(409);
    const pending = (await deliveriesOf(hook.id)).filter((d) => d.status === "pending");
    expect(pending.map((d) => [d.id, d.eventId])).toEqual([[copy, eventId]]);
    await dispatcher().runOnce();
    expect((await t.request("POST", path)).status).toBe(202);
  });

  it("answers 404 when the subscription is deleted while a redelivery waits for it", async () => {
    const hook = await createWebhook(receiver.url("/deleted-redeliver"));
    await emit();
    await dispatcher().runOnce();
    const [delivery] = await deliveriesOf(hook.id);
    const deleting = await t.app.db.pool.connect();
    try {
      await deleting.query("BEGIN");
      await deleting.query("DELETE FROM webhooks WHERE id = $1", [hook.id]);
      const pending = t.request("POST", `/webhooks/${hook.id}/deliveries/${delivery!.id}/redeliver`);
      // The redelivery now waits on the deleting transaction's lock.
      const deadline = Date.now() + 5000;
      while (
        (
          await t.app.db.pool.query(
            "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
          )
        ).rowCount === 0
      ) {
        if (Date.now() > deadline) throw new Error("the redelivery never waited for the lock");
        await new Promise((r) => setTimeout(r, 10));
      }
      await deleting.query("COMMIT");
      const res = await pending;
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(res.body.code).toBe("not_found");
    } finally {
      deleting.release();
    }
  });

  it("answers 404 for unknown or malformed ids and 403 without the scope", async () => {
    const hook = await createWebhook(receiver.url("/ids"));
    const eventId = await emit();
    await dispatcher().runOnce();
    const [delivery] = await deliveriesOf(hook.id);
    const other = await createWebhook(receiver.url("/other"));
    for (const path of [`/webhooks/${newId()}/deliveries`, "/webhooks/not-an-id/deliveries"]) {
      expect((await t.request("GET", path)).status).toBe(404);
    }
    for (const path of [
      `/webhooks/${hook.id}/deliveries/${newId()}/redeliver`,
      `/webhooks/${hook.id}/deliveries/nope/redeliver`,
      `/webhooks/${other.id}/deliveries/${delivery!.id}/redeliver`,
      `/webhooks/${newId()}/deliveries/${delivery!.id}/redeliver`,
    ]) {
      const res = await t.request("POST", path);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    }
    expect(
      (await t.request("GET", `/webhooks/${hook.id}/deliveries`, { token: await t.token(["scans:read"]) })).status,
    ).toBe(403);
    const readOnly = await t.token(["webhooks:read"]);
    expect(
      (await t.request("POST", `/webhooks/${hook.id}/deliveries/${delivery!.id}/redeliver`, { token: readOnly }))
        .status,
    ).toBe(403);
    expect(await t.app.db.prisma.webhookDelivery.count({ where: { eventId } })).toBe(1);
  });
});

describe("metrics", () => {
  it("counts outcomes, times attempts and reports the backlog on scrape", async () => {
    await dispatcher().runOnce(); // cancels what earlier tests left pending
    await createWebhook(receiver.url("/metrics"));
    await emit();
    await emit();
    const before = await t.request("GET", "/metrics", { token: null });
    expect(before.text).toMatch(/^webhook_backlog 2$/m); // two unfanned events
    await dispatcher().runOnce();
    const after = await t.request("GET", "/metrics", { token: null });
    expect(after.text).toMatch(/^webhook_backlog 0$/m);
    expect(after.text).toMatch(/^webhook_deliveries_total\{outcome="delivered"\} [1-9]\d*$/m);
    expect(after.text).toMatch(/^webhook_attempt_duration_seconds_count [1-9]\d*$/m);
  });
});
