// The audit trail (docs/spec/CONTRACT.md §17): every change of an application, a policy or a webhook
// subscription is an event with its actor, the resource as REST returns it, and for an update the
// fields that changed; seen by whoever could see the resource when it was committed, through REST
// and GraphQL alike, and delivered by signed webhooks (a SIEM's way in).
import { verifyWebhookDelivery } from "appsec-service/webhook-verify";
import type { WebhookDispatcher } from "../../src/dispatcher/dispatcher.ts";
import { AUDIT_EVENT_TYPES } from "../../src/events/catalog.ts";
import { gql } from "../helpers/graphql.ts";
import { startHttpsReceiver, type HttpsReceiver } from "../helpers/https-receiver.ts";
import { createSelfSignedCert, type SelfSignedCert } from "../helpers/self-signed-cert.ts";
import { teamToken } from "../helpers/team-tokens.ts";
import { dispatcherTrusting, startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
let cert: SelfSignedCert;
let receiver: HttpsReceiver;
let dispatcher: WebhookDispatcher;
beforeAll(async () => {
  cert = createSelfSignedCert();
  receiver = await startHttpsReceiver(cert);
  t = await startTestApp({
    AUTH_TEAMS_CLAIM: "teams",
    AUTH_ORG_WIDE_TEAMS: "appsec",
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
  });
  dispatcher = dispatcherTrusting(t, cert.cert);
});
afterAll(async () => {
  await t.close();
  await receiver.close();
  cert.remove();
});

const AUDIT_TYPES = AUDIT_EVENT_TYPES.join(",");

interface LoggedEvent {
  id: string;
  type: string;
  data: Record<string, any>;
}

/** The audit events `token` reads about `ids` (an id in the data), once the log has them all. */
async function auditOf(token: string, ids: string[], atLeast = 0): Promise<LoggedEvent[]> {
  for (let i = 0; ; i++) {
    await dispatcher.runOnce(); // the fan-out gives events their places in the log
    const res = await t.request("GET", `/events?types=${AUDIT_TYPES}&limit=500`, { token });
    expect(res.status).toBe(200);
    const events = (res.body as LoggedEvent[]).filter((e) => ids.includes(e.data.id));
    if (events.length >= atLeast || i > 100) return events;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("applications", () => {
  it("records create, update and delete with the actor, the REST view and what changed; a no-op update records nothing", async () => {
    const alice = await teamToken(["team-a"], undefined, "alice");
    const created = await t.request("POST", "/applications", {
      token: alice,
      body: { name: "ledger", criticality: "high", tags: ["pci"] },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const updated = await t.request("PUT", `/applications/${id}`, {
      token: alice,
      body: { description: "Keeps the books", tags: ["pci", "sox"] },
    });
    expect(updated.status).toBe(200);
    // Sending back what it already is changes no value: no event.
    const same = await t.request("PUT", `/applications/${id}`, { token: alice, body: updated.body });
    expect(same.status).toBe(200);
    expect((await t.request("DELETE", `/applications/${id}`, { token: alice })).status).toBe(204);

    const events = await auditOf(alice, [id], 3);
    expect(events.map((e) => e.type)).toEqual(["application.created", "application.updated", "application.deleted"]);
    const [create, update, remove] = events.map((e) => e.data);
    expect(create).toEqual({ ...created.body, actor: { sub: "alice" } });
    expect(update).toEqual({ ...updated.body, actor: { sub: "alice" }, changed: ["description", "tags"] });
    expect(remove).toEqual({ id, name: "ledger", actor: { sub: "alice" } });
  });

  it("shows an application's events to its team and to org-wide tokens only; a move to both teams, and the new team the rest", async () => {
    const admin = await t.token(["admin"], "root");
    const a = await teamToken(["team-a"]);
    const b = await teamToken(["team-b"]);
    const c = await teamToken(["team-c"]);
    const appsec = await teamToken(["appsec"]);
    const id = (await t.request("POST", "/applications", { token: a, body: { name: "mover" } })).body.id;
    await t.request("PUT", `/applications/${id}`, { token: admin, body: { owner: "team-b" } });
    await t.request("PUT", `/applications/${id}`, { token: b, body: { criticality: "critical" } });

    const types = async (token: string, n: number) => (await auditOf(token, [id], n)).map((e) => e.type);
    expect(await types(appsec, 3)).toEqual(["application.created", "application.updated", "application.updated"]);
    expect(await types(a, 2)).toEqual(["application.created", "application.updated"]);
    expect(await types(b, 2)).toEqual(["application.updated", "application.updated"]);
    expect(await types(c, 0)).toEqual([]);
    const move = (await auditOf(appsec, [id], 3))[1]!.data;
    expect(move).toMatchObject({ owner: "team-b", changed: ["owner"], actor: { sub: "root" } });
  });

  it("records the change whichever door it came through: a GraphQL mutation is the same event", async () => {
    const alice = await teamToken(["team-a"], undefined, "alice");
    const res = await gql(
      t,
      `mutation { createApplication(input: { name: "via-graphql" }) { id owner } }`,
      {},
      { token: alice },
    );
    expect(res.body.data.createApplication.owner).toBe("team-a");
    const [event] = await auditOf(alice, [res.body.data.createApplication.id], 1);
    expect(event).toMatchObject({
      type: "application.created",
      data: { name: "via-graphql", actor: { sub: "alice" } },
    });
  });
});

describe("policies", () => {
  it("shows a team's policy's events to that team, the organisation's to everyone, one of two teams' to tokens of both", async () => {
    const admin = await t.token(["admin"], "root");
    const a = await teamToken(["team-a"]);
    const b = await teamToken(["team-b"]);
    const ab = await teamToken(["team-a", "team-b"]);
    const appA = (await t.request("POST", "/applications", { token: a, body: { name: "policy-a" } })).body.id;
    const appB = (await t.request("POST", "/applications", { token: b, body: { name: "policy-b" } })).body.id;
    const own = await t.request("POST", "/policies", {
      token: a,
      body: { name: "a-gate", action: "block", conditions: { applicationIds: [appA] } },
    });
    expect(own.status).toBe(201);
    const org = await t.request("POST", "/policies", { token: admin, body: { name: "org-gate", action: "monitor" } });
    const both = await t.request("POST", "/policies", {
      token: admin,
      body: { name: "ab-gate", action: "block", conditions: { applicationIds: [appA, appB] } },
    });
    const ids = [own.body.id, org.body.id, both.body.id];
    const names = async (token: string, n: number) => (await auditOf(token, ids, n)).map((e) => e.data.name).sort();
    expect(await names(a, 2)).toEqual(["a-gate", "org-gate"]);
    expect(await names(b, 1)).toEqual(["org-gate"]);
    expect(await names(ab, 3)).toEqual(["a-gate", "ab-gate", "org-gate"]);
  });

  it("records a deleted application's removal from the policies naming it as their update, by whoever deleted it", async () => {
    const alice = await teamToken(["team-a"], undefined, "alice");
    const keep = (await t.request("POST", "/applications", { token: alice, body: { name: "kept" } })).body.id;
    const gone = (await t.request("POST", "/applications", { token: alice, body: { name: "gone" } })).body.id;
    const policy = await t.request("POST", "/policies", {
      token: alice,
      body: { name: "two-apps", action: "block", conditions: { applicationIds: [keep, gone] } },
    });
    expect((await t.request("DELETE", `/applications/${gone}`, { token: alice })).status).toBe(204);
    const [, update] = await auditOf(alice, [policy.body.id], 2);
    expect(update!.type).toBe("policy.updated");
    expect(update!.data).toMatchObject({ changed: ["conditions"], actor: { sub: "alice" } });
    expect(update!.data.conditions.applicationIds).toEqual([keep]);
  });
});

it("needs the resource's read scope: a token without applications:read gets no application.* event", async () => {
  const reader = await teamToken(["team-a"], ["scans:read", "policies:read"]);
  const res = await t.request("GET", "/events?limit=500", { token: reader });
  expect(res.status).toBe(200);
  const types = new Set((res.body as LoggedEvent[]).map((e) => e.type));
  expect([...types].some((type) => type.startsWith("application."))).toBe(false);
  expect(types.has("policy.created")).toBe(true);
  const refused = await t.request("GET", "/events?types=application.created", { token: reader });
  expect(refused.status).toBe(403);
});

describe("webhook subscriptions", () => {
  it("records create, update (a new secret named, never shown) and delete, seen by the subscription's teams", async () => {
    const a = await teamToken(["team-a"], undefined, "alice");
    const created = await t.request("POST", "/webhooks", {
      token: a,
      body: { name: "a-hook", url: receiver.url("/a"), events: ["scan.completed"], secret: "first-secret-0123456789" },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    await t.request("PUT", `/webhooks/${id}`, { token: a, body: { secret: "second-secret-0123456789" } });
    await t.request("PUT", `/webhooks/${id}`, { token: a, body: { name: "a-hook-renamed", secret: "********" } });
    expect((await t.request("DELETE", `/webhooks/${id}`, { token: a })).status).toBe(204);

    const events = await auditOf(a, [id], 4);
    expect(events.map((e) => [e.type, e.data.changed])).toEqual([
      ["webhook.created", undefined],
      ["webhook.updated", ["secret"]],
      ["webhook.updated", ["name"]],
      ["webhook.deleted", undefined],
    ]);
    expect(events[0]!.data).toEqual({ ...created.body, actor: { sub: "alice" } });
    expect(JSON.stringify(events)).not.toContain("secret-0123456789");
    expect(await auditOf(await teamToken(["team-b"]), [id])).toEqual([]);
    expect(await auditOf(await teamToken(["appsec"]), [id], 4)).toHaveLength(4);
  });

  it("delivers the audit trail, signed, to a SIEM's subscription", async () => {
    const secret = "siem-secret-0123456789";
    const siem = await t.request("POST", "/webhooks", {
      body: {
        name: "siem",
        url: receiver.url("/siem"),
        events: ["application.created", "application.updated"],
        secret,
      },
    });
    expect(siem.status).toBe(201);
    receiver.requests.length = 0;
    const app = await t.request("POST", "/applications", {
      token: await teamToken(["team-a"], undefined, "alice"),
      body: { name: "for-the-siem" },
    });
    for (let i = 0; i < 50 && !receiver.requests.some((r) => r.path === "/siem"); i++) await dispatcher.runOnce();
    const [delivered] = receiver.requests.filter((r) => r.path === "/siem");
    const verified = verifyWebhookDelivery({ rawBody: delivered!.rawBody, secret, headers: delivered!.headers });
    expect(verified.eventType).toBe("application.created");
    expect(verified.data).toMatchObject({ id: app.body.id, owner: "team-a", actor: { sub: "alice" } });
  });
});
