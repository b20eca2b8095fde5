// POST /webhooks/{id}/recover (docs/spec/CONTRACT.md §14) against a real HTTPS receiver: exactly the deliveries
// given up or dropped since T are sent again, as new deliveries (new ids), signed; and a fresh delivery
// held back while its endpoint fails shows "waiting": "endpoint_recovery" in the delivery log.
import { verifyWebhookDelivery } from "appsec-service/webhook-verify";
import type { WebhookDispatcher } from "../../src/dispatcher/dispatcher.ts";
import { recordEvent } from "../../src/events/outbox.ts";
import { newId } from "../../src/ids.ts";
import { gql } from "../helpers/graphql.ts";
import { startHttpsReceiver, type HttpsReceiver, type ReceivedRequest } from "../helpers/https-receiver.ts";
import { createSelfSignedCert, type SelfSignedCert } from "../helpers/self-signed-cert.ts";
import { dispatcherTrusting, startTestApp, type TestApp } from "../helpers/test-app.ts";

const SECRET = "recover-secret-0123456789";

let cert: SelfSignedCert;
let receiver: HttpsReceiver;
beforeAll(async () => {
  cert = createSelfSignedCert();
  receiver = await startHttpsReceiver(cert);
});
afterAll(async () => {
  await receiver.close();
  cert.remove();
});

async function service(env: Record<string, string>): Promise<{ t: TestApp; dispatcher: WebhookDispatcher }> {
  const t = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: "true", WEBHOOK_TIMEOUT_MS: "1000", ...env });
  return { t, dispatcher: dispatcherTrusting(t, cert.cert) };
}

const scanData = (triggeredBy: string) => ({
  id: newId(),
  applicationId: newId(),
  scanType: "sast",
  status: "completed",
  triggeredBy,
  startedAt: null,
  completedAt: null,
  summary: null,
});

const bodyOf = (req: ReceivedRequest) =>
  JSON.parse(req.rawBody.toString()) as { eventId: string; data: { triggeredBy: string } };

describe("recover", () => {
  let t: TestApp;
  let dispatcher: WebhookDispatcher;
  beforeAll(async () => {
    // A failed attempt is given up at once: the retry window is shorter than the first retry.
    ({ t, dispatcher } = await service({ WEBHOOK_RETRY_INITIAL_MS: "60000", WEBHOOK_RETRY_WINDOW_MS: "1" }));
  });
  afterAll(() => t.close());
  afterEach(() => {
    receiver.requests.length = 0;
    receiver.answer = () => ({ status: 200 });
  });

  it("sends again, as new signed deliveries, exactly the events since T whose delivery failed or was dropped", async () => {
    const created = await t.request("POST", "/webhooks", {
      body: { name: "recover", url: receiver.url("/recover"), events: ["scan.completed"], secret: SECRET },
    });
    const webhookId = created.body.id as string;
    // The receiver refuses events by what they say: 5xx (given up: failed), 4xx (dropped), else 2xx.
    receiver.answer = (req) => {
      const name = bodyOf(req).data.triggeredBy;
      return { status: name.startsWith("fail") ? 503 : name.startsWith("drop") ? 422 : 204 };
    };
    const commit = (name: string) =>
      t.app.db.prisma.$transaction((tx) => recordEvent(tx, "scan.completed", scanData(name)));
    /** Passes until nothing is pending (a failing endpoint is sent a couple of attempts per pass). */
    const drain = async () => {
      for (let pass = 0; pass < 20; pass++) {
        await dispatcher.runOnce();
        if ((await t.app.db.prisma.webhookDelivery.count({ where: { webhookId, status: "pending" } })) === 0) return;
      }
      throw new Error("deliveries still pending after 20 passes");
    };
    const before = [await commit("fail-before")];
    await drain();
    const since = new Date();
    await new Promise((r) => setTimeout(r, 5));
    const recoverable = [await commit("fail-1"), await commit("drop-1"), await commit("fail-2")];
    const fine = await commit("ok-1");
    await drain();
    const statuses = await t.app.db.prisma.webhookDelivery.findMany({
      where: { webhookId },
      select: { eventId: true, status: true },
    });
    expect(Object.fromEntries(statuses.map((d) => [d.eventId, d.status]))).toEqual({
      [before[0]!]: "failed",
      [recoverable[0]!]: "failed",
      [recoverable[1]!]: "dropped",
      [recoverable[2]!]: "failed",
      [fine]: "delivered",
    });
    const firstDeliveryIds = new Set(receiver.requests.map((r) => r.headers["x-webhook-id"]));

    receiver.requests.length = 0;
    receiver.answer = () => ({ status: 204 });
    const res = await t.request("POST", `/webhooks/${webhookId}/recover`, { body: { since: since.toISOString() } });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ deliveries: 3 });
    await drain();
    expect(receiver.requests.map((r) => bodyOf(r).eventId).sort()).toEqual([...recoverable].sort());
    for (const req of receiver.requests) {
      expect(firstDeliveryIds.has(req.headers["x-webhook-id"])).toBe(false);
      const verified = verifyWebhookDelivery({ rawBody: req.rawBody, secret: SECRET, headers: req.headers });
      expect(recoverable).toContain(verified.eventId);
    }
    // They were received: recovering again sends nothing twice.
    expect(
      (await t.request("POST", `/webhooks/${webhookId}/recover`, { body: { since: since.toISOString() } })).body,
    ).toEqual({ deliveries: 0 });
    // GraphQL has the same door.
    const viaGraphql = await gql(
      t,
      "mutation($id: ID!, $since: DateTime!) { recoverWebhookDeliveries(webhookId: $id, since: $since) { deliveries } }",
      {
        id: webhookId,
        since: new Date(since.getTime() - 60_000).toISOString(),
      },
    );
    expect(viaGraphql.body.data.recoverWebhookDeliveries).toEqual({ deliveries: 1 }); // the one before T
  });

  it("answers bad input, unknown or disabled subscriptions and missing scopes as the other writes do", async () => {
    const created = await t.request("POST", "/webhooks", {
      body: { name: "recover-errors", url: receiver.url("/errors"), events: ["scan.completed"], secret: SECRET },
    });
    const path = `/webhooks/${created.body.id}/recover`;
    const since = new Date().toISOString();
    expect((await t.request("POST", path, { body: { since: "yesterday" } })).body.errors[0].path).toBe("since");
    expect((await t.request("POST", path, { body: {} })).status).toBe(400);
    expect((await t.request("POST", path, { body: { since, extra: 1 } })).status).toBe(400);
    expect((await t.request("POST", `/webhooks/${newId()}/recover`, { body: { since } })).status).toBe(404);
    expect((await t.request("POST", path, { body: { since }, token: await t.token(["webhooks:read"]) })).status).toBe(
      403,
    );
    await t.request("PUT", `/webhooks/${created.body.id}`, { body: { status: "disabled" } });
    expect((await t.request("POST", path, { body: { since } })).status).toBe(409);
  });
});

describe("a delivery held back while its endpoint fails", () => {
  it('shows "waiting": "endpoint_recovery" until the endpoint answers again, and is then sent', async () => {
    const { t, dispatcher } = await service({ WEBHOOK_RETRY_INITIAL_MS: "60000" });
    try {
      const created = await t.request("POST", "/webhooks", {
        body: { name: "held", url: receiver.url("/held"), events: ["scan.completed"], secret: SECRET },
      });
      const webhookId = created.body.id as string;
      receiver.answer = () => ({ status: 503 });
      await t.app.db.prisma.$transaction((tx) => recordEvent(tx, "scan.completed", scanData("first")));
      await dispatcher.runOnce(); // attempted, failed: a retry in a minute
      await t.app.db.prisma.$transaction((tx) => recordEvent(tx, "scan.completed", scanData("second")));
      await dispatcher.runOnce(); // fanned out, but held behind the retry
      expect(receiver.requests).toHaveLength(1);

      const log = (await t.request("GET", `/webhooks/${webhookId}/deliveries`)).body as {
        status: string;
        waiting: string | null;
        attempts: unknown[];
      }[];
      expect(log.map((d) => [d.status, d.attempts.length, d.waiting])).toEqual([
        ["pending", 0, "endpoint_recovery"],
        ["pending", 1, null],
      ]);
      const viaGraphql = await gql(
        t,
        "query($id: ID!) { webhook(id: $id) { deliveries { edges { node { waiting } } } } }",
        { id: webhookId },
      );
      expect(
        viaGraphql.body.data.webhook.deliveries.edges.map((e: { node: { waiting: string | null } }) => e.node.waiting),
      ).toEqual(["ENDPOINT_RECOVERY", null]);

      // The endpoint recovers: the retry goes (brought forward here), then what waited behind it.
      receiver.answer = () => ({ status: 204 });
      await t.app.db.pool.query(
        "UPDATE webhook_deliveries SET next_attempt_at = now() WHERE webhook_id = $1 AND attempt_count > 0",
        [webhookId],
      );
      await dispatcher.runOnce();
      await dispatcher.runOnce();
      const after = (await t.request("GET", `/webhooks/${webhookId}/deliveries`)).body as {
        status: string;
        waiting: string | null;
      }[];
      expect(after.map((d) => [d.status, d.waiting])).toEqual([
        ["delivered", null],
        ["delivered", null],
      ]);
    } finally {
      await dispatcher.stop();
      await t.close();
    }
  });
});
