import { fanOutEvents } from "../../src/dispatcher/fan-out.ts";
import { recordEvent } from "../../src/events/outbox.ts";
import { newId } from "../../src/ids.ts";
import { codesOf, gql } from "../helpers/graphql.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const POLICY = "id name action conditions { applicationIds vulnerabilitySeverity } createdAt updatedAt";
const WEBHOOK = "id name url events secret status teams createdAt updatedAt";

describe("GraphQL policies", () => {
  it("creates, reads (both doors), updates, lists and deletes with REST's rules", async () => {
    const app = (await t.request("POST", "/applications", { body: { name: "pol-app" } })).body.id;
    const created = await gql(t, `mutation($i: CreatePolicyInput!) { createPolicy(input: $i) { ${POLICY} } }`, {
      i: {
        name: "no-criticals",
        action: "BLOCK",
        conditions: { applicationIds: [app], vulnerabilitySeverity: "CRITICAL" },
      },
    });
    expect(created.body.errors).toBeUndefined();
    const policy = created.body.data.createPolicy;
    expect(policy).toMatchObject({
      action: "BLOCK",
      conditions: { applicationIds: [app], vulnerabilitySeverity: "CRITICAL" },
    });
    const rest = await t.request("GET", `/policies/${policy.id}`);
    expect(rest.body).toEqual({
      ...policy,
      action: "block",
      conditions: { applicationIds: [app], vulnerabilitySeverity: "critical" },
    });

    const updated = await gql(
      t,
      `mutation($id: ID!, $i: UpdatePolicyInput!) { updatePolicy(id: $id, input: $i) { ${POLICY} } }`,
      {
        id: policy.id,
        i: { conditions: { applicationIds: null } },
      },
    );
    expect(updated.body.data.updatePolicy).toMatchObject({
      name: "no-criticals",
      action: "BLOCK",
      conditions: { applicationIds: null },
    });

    const list = await gql(t, `{ policies(first: 10) { totalCount edges { node { id } } } }`);
    expect(list.body.data.policies).toEqual({ totalCount: 1, edges: [{ node: { id: policy.id } }] });
    expect(
      codesOf(
        await gql(t, `mutation($i: CreatePolicyInput!) { createPolicy(input: $i) { id } }`, {
          i: { name: "no-criticals", action: "MONITOR" },
        }),
      ),
    ).toEqual(["CONFLICT"]);
    const unknownApp = await gql(t, `mutation($i: CreatePolicyInput!) { createPolicy(input: $i) { id } }`, {
      i: { name: "p2", action: "MONITOR", conditions: { applicationIds: ["0190d6a4-6a2e-7000-8000-000000000000"] } },
    });
    expect(codesOf(unknownApp)).toEqual(["BAD_USER_INPUT"]);
    expect(unknownApp.body.errors[0].extensions.errors[0].path).toBe("conditions.applicationIds[0]");

    expect(
      (await gql(t, `mutation($id: ID!) { deletePolicy(id: $id) }`, { id: policy.id })).body.data.deletePolicy,
    ).toBe(policy.id);
    expect(codesOf(await gql(t, `query($id: ID!) { policy(id: $id) { id } }`, { id: policy.id }))).toEqual([
      "NOT_FOUND",
    ]);
    const readOnly = await t.token(["policies:read"]);
    expect(
      codesOf(
        await gql(t, `mutation { createPolicy(input: { name: "x", action: ALLOW }) { id } }`, undefined, {
          token: readOnly,
        }),
      ),
    ).toEqual(["FORBIDDEN"]);
  });
});

describe("GraphQL webhooks", () => {
  it("masks the secret, validates like REST and agrees with REST", async () => {
    const created = await gql(t, `mutation($i: CreateWebhookInput!) { createWebhook(input: $i) { ${WEBHOOK} } }`, {
      i: {
        name: "siem",
        url: "https://hooks.example.com/in",
        events: ["SCAN_COMPLETED", "VULNERABILITY_CREATED"],
        secret: "s3cret-value",
      },
    });
    expect(created.body.errors).toBeUndefined();
    const hook = created.body.data.createWebhook;
    expect(hook).toMatchObject({
      secret: "********",
      status: "ACTIVE",
      events: ["SCAN_COMPLETED", "VULNERABILITY_CREATED"],
    });
    expect(created.text).not.toContain("s3cret-value");
    const rest = await t.request("GET", `/webhooks/${hook.id}`);
    expect(rest.body).toEqual({ ...hook, status: "active", events: ["scan.completed", "vulnerability.created"] });

    const updated = await gql(
      t,
      `mutation($id: ID!, $i: UpdateWebhookInput!) { updateWebhook(id: $id, input: $i) { ${WEBHOOK} } }`,
      {
        id: hook.id,
        i: { status: "DISABLED", secret: "********" },
      },
    );
    expect(updated.body.data.updateWebhook).toMatchObject({ status: "DISABLED", secret: "********", name: "siem" });
    const row = await t.app.db.prisma.webhook.findUniqueOrThrow({ where: { id: hook.id } });
    expect(row.sealedSecret).not.toContain("s3cret-value");
    expect(t.app.webhookSecrets.open(row.sealedSecret, row.id)).toBe("s3cret-value");

    const bad = await gql(
      t,
      `mutation { createWebhook(input: { name: "x", url: "http://example.com", events: [SCAN_FAILED], secret: "k" }) { id } }`,
    );
    expect(codesOf(bad)).toEqual(["BAD_USER_INPUT"]);
    expect(bad.body.errors[0].extensions.errors.map((e: { path: string }) => e.path)).toContain("url");

    const list = await gql(t, `{ webhooks { totalCount edges { node { id secret } } } }`);
    expect(list.body.data.webhooks).toEqual({ totalCount: 1, edges: [{ node: { id: hook.id, secret: "********" } }] });
    expect(
      (await gql(t, `mutation($id: ID!) { deleteWebhook(id: $id) }`, { id: hook.id })).body.data.deleteWebhook,
    ).toBe(hook.id);
    expect(codesOf(await gql(t, `query($id: ID!) { webhook(id: $id) { id } }`, { id: hook.id }))).toEqual([
      "NOT_FOUND",
    ]);
    const noScope = await t.token(["applications:read"]);
    expect(codesOf(await gql(t, `{ webhooks { totalCount } }`, undefined, { token: noScope }))).toEqual(["FORBIDDEN"]);
  });
});

describe("GraphQL webhook deliveries", () => {
  const DELIVERY =
    "id eventId eventType status createdAt nextAttemptAt waiting attempts { attemptedAt statusCode durationMs error }";
  const DELIVERIES = `query($id: ID!, $first: Int, $after: String) {
    webhook(id: $id) { deliveries(first: $first, after: $after) { pageInfo { hasNextPage endCursor } edges { node { ${DELIVERY} } } } }
  }`;
  const REDELIVER = `mutation($w: ID!, $d: ID!) { redeliverWebhookDelivery(webhookId: $w, deliveryId: $d) { ${DELIVERY} } }`;
  /** REST's view of a delivery, in GraphQL's spelling. */
  const asGraphQL = (d: { eventType: string; status: string; waiting: string | null }) => ({
    ...d,
    eventType: d.eventType.replace(".", "_").toUpperCase(),
    status: d.status.toUpperCase(),
    waiting: d.waiting?.toUpperCase() ?? null,
  });

  let hookId: string;
  let eventIds: string[];
  beforeAll(async () => {
    hookId = (
      await t.request("POST", "/webhooks", {
        body: { name: "log", url: "https://hooks.example.com/log", events: ["scan.completed"], secret: "k" },
      })
    ).body.id;
    eventIds = [];
    for (let i = 0; i < 2; i++) {
      const data = {
        id: newId(),
        applicationId: newId(),
        scanType: "sast",
        status: "completed",
        triggeredBy: "ci",
        startedAt: null,
        completedAt: null,
        summary: null,
      };
      eventIds.push(await t.app.db.prisma.$transaction((tx) => recordEvent(tx, "scan.completed", data)));
      await fanOutEvents(t.app.db.pool, 10); // one at a time: distinct creation times
    }
    const [older] = await t.app.db.prisma.webhookDelivery.findMany({
      where: { webhookId: hookId, eventId: eventIds[0] },
    });
    await t.app.db.prisma.deliveryAttempt.create({
      data: {
        id: newId(),
        deliveryId: older!.id,
        attemptedAt: new Date(),
        statusCode: 503,
        durationMs: 12,
        error: null,
      },
    });
  });

  it("lists a webhook's deliveries as a connection that agrees with REST's list", async () => {
    const rest = await t.request("GET", `/webhooks/${hookId}/deliveries`);
    expect(rest.status).toBe(200);
    expect(rest.body).toHaveLength(2);
    expect(rest.body[1].attempts).toHaveLength(1);
    const all = await gql(t, DELIVERIES, { id: hookId }, { token: await t.token(["webhooks:read"]) });
    expect(all.body.errors).toBeUndefined();
    expect(all.body.data.webhook.deliveries.edges.map((e: { node: unknown }) => e.node)).toEqual(
      rest.body.map(asGraphQL),
    );

    const page1 = await gql(t, DELIVERIES, { id: hookId, first: 1 });
    expect(page1.body.data.webhook.deliveries.pageInfo.hasNextPage).toBe(true);
    expect(page1.body.data.webhook.deliveries.edges.map((e: { node: { eventId: string } }) => e.node.eventId)).toEqual([
      eventIds[1],
    ]);
    const page2 = await gql(t, DELIVERIES, {
      id: hookId,
      first: 1,
      after: page1.body.data.webhook.deliveries.pageInfo.endCursor,
    });
    expect(page2.body.data.webhook.deliveries.pageInfo.hasNextPage).toBe(false);
    expect(page2.body.data.webhook.deliveries.edges.map((e: { node: { eventId: string } }) => e.node.eventId)).toEqual([
      eventIds[0],
    ]);
  });

  it("redelivers as a new pending delivery of the same event, as REST does", async () => {
    const [, older] = (await t.request("GET", `/webhooks/${hookId}/deliveries`)).body;
    const redeliver = async () =>
      gql(t, REDELIVER, { w: hookId, d: older.id }, { token: await t.token(["webhooks:write"]) });
    // Still pending (no dispatcher runs here): a conflict, as REST's 409.
    expect(codesOf(await redeliver())).toEqual(["CONFLICT"]);
    await t.app.db.pool.query(
      "UPDATE webhook_deliveries SET status = 'delivered', next_attempt_at = NULL WHERE id = $1",
      [older.id],
    );
    const res = await redeliver();
    expect(res.body.errors).toBeUndefined();
    const created = res.body.data.redeliverWebhookDelivery;
    expect(created).toMatchObject({
      eventId: eventIds[0],
      eventType: "SCAN_COMPLETED",
      status: "PENDING",
      attempts: [],
    });
    expect(created.id).not.toBe(older.id);
    const rest = await t.request("GET", `/webhooks/${hookId}/deliveries/${created.id}`);
    expect(rest.status).toBe(200);
    expect(asGraphQL(rest.body)).toEqual(created);
  });

  it("answers NOT_FOUND for unknown or mismatched ids and FORBIDDEN without webhooks:write", async () => {
    const [delivery] = (await t.request("GET", `/webhooks/${hookId}/deliveries`)).body;
    const other = (
      await t.request("POST", "/webhooks", {
        body: { name: "other", url: "https://hooks.example.com/other", events: ["scan.failed"], secret: "k" },
      })
    ).body.id;
    for (const [w, d] of [
      [newId(), delivery.id],
      [hookId, newId()],
      [other, delivery.id],
      ["not-an-id", delivery.id],
      [hookId, "not-an-id"],
    ]) {
      expect(codesOf(await gql(t, REDELIVER, { w, d }))).toEqual(["NOT_FOUND"]);
    }
    const before = await t.app.db.prisma.webhookDelivery.count({ where: { webhookId: hookId } });
    const readOnly = await t.token(["webhooks:read"]);
    expect(codesOf(await gql(t, REDELIVER, { w: hookId, d: delivery.id }, { token: readOnly }))).toEqual(["FORBIDDEN"]);
    expect(await t.app.db.prisma.webhookDelivery.count({ where: { webhookId: hookId } })).toBe(before);
  });
});
