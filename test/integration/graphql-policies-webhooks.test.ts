import { codesOf, gql } from "../helpers/graphql.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const POLICY = "id name action conditions { applicationIds vulnerabilitySeverity } createdAt updatedAt";
const WEBHOOK = "id name url events secret status createdAt updatedAt";

describe("GraphQL policies", () => {
  it("creates, reads (both doors), updates, lists and deletes with REST's rules", async () => {
    const app = (await t.request("POST", "/applications", { body: { name: "pol-app" } })).body.id;
    const created = await gql(t, `mutation($i: CreatePolicyInput!) { createPolicy(input: $i) { ${POLICY} } }`, {
      i: { name: "no-criticals", action: "BLOCK", conditions: { applicationIds: [app], vulnerabilitySeverity: "CRITICAL" } },
    });
    expect(created.body.errors).toBeUndefined();
    const policy = created.body.data.createPolicy;
    expect(policy).toMatchObject({ action: "BLOCK", conditions: { applicationIds: [app], vulnerabilitySeverity: "CRITICAL" } });
    const rest = await t.request("GET", `/policies/${policy.id}`);
    expect(rest.body).toEqual({ ...policy, action: "block", conditions: { applicationIds: [app], vulnerabilitySeverity: "critical" } });

    const updated = await gql(t, `mutation($id: ID!, $i: UpdatePolicyInput!) { updatePolicy(id: $id, input: $i) { ${POLICY} } }`, {
      id: policy.id,
      i: { conditions: { applicationIds: null } },
    });
    expect(updated.body.data.updatePolicy).toMatchObject({ name: "no-criticals", action: "BLOCK", conditions: { applicationIds: null } });

    const list = await gql(t, `{ policies(first: 10) { totalCount edges { node { id } } } }`);
    expect(list.body.data.policies).toEqual({ totalCount: 1, edges: [{ node: { id: policy.id } }] });
    expect(codesOf(await gql(t, `mutation($i: CreatePolicyInput!) { createPolicy(input: $i) { id } }`, { i: { name: "no-criticals", action: "MONITOR" } }))).toEqual(["CONFLICT"]);
    const unknownApp = await gql(t, `mutation($i: CreatePolicyInput!) { createPolicy(input: $i) { id } }`, {
      i: { name: "p2", action: "MONITOR", conditions: { applicationIds: ["0190d6a4-6a2e-7000-8000-000000000000"] } },
    });
    expect(codesOf(unknownApp)).toEqual(["BAD_USER_INPUT"]);
    expect(unknownApp.body.errors[0].extensions.errors[0].path).toBe("conditions.applicationIds[0]");

    expect((await gql(t, `mutation($id: ID!) { deletePolicy(id: $id) }`, { id: policy.id })).body.data.deletePolicy).toBe(policy.id);
    expect(codesOf(await gql(t, `query($id: ID!) { policy(id: $id) { id } }`, { id: policy.id }))).toEqual(["NOT_FOUND"]);
    const readOnly = await t.token(["policies:read"]);
    expect(codesOf(await gql(t, `mutation { createPolicy(input: { name: "x", action: ALLOW }) { id } }`, undefined, { token: readOnly }))).toEqual(["FORBIDDEN"]);
  });
});

describe("GraphQL webhooks", () => {
  it("masks the secret, validates like REST and agrees with REST", async () => {
    const created = await gql(t, `mutation($i: CreateWebhookInput!) { createWebhook(input: $i) { ${WEBHOOK} } }`, {
      i: { name: "siem", url: "https://hooks.example.com/in", events: ["SCAN_COMPLETED", "VULNERABILITY_CREATED"], secret: "s3cret-value" },
    });
    expect(created.body.errors).toBeUndefined();
    const hook = created.body.data.createWebhook;
    expect(hook).toMatchObject({ secret: "********", status: "ACTIVE", events: ["SCAN_COMPLETED", "VULNERABILITY_CREATED"] });
    expect(created.text).not.toContain("s3cret-value");
    const rest = await t.request("GET", `/webhooks/${hook.id}`);
    expect(rest.body).toEqual({ ...hook, status: "active", events: ["scan.completed", "vulnerability.created"] });

    const updated = await gql(t, `mutation($id: ID!, $i: UpdateWebhookInput!) { updateWebhook(id: $id, input: $i) { ${WEBHOOK} } }`, {
      id: hook.id,
      i: { status: "DISABLED", secret: "********" },
    });
    expect(updated.body.data.updateWebhook).toMatchObject({ status: "DISABLED", secret: "********", name: "siem" });
    const row = await t.app.db.prisma.webhook.findUniqueOrThrow({ where: { id: hook.id } });
    expect(row.secret).toBe("s3cret-value");

    const bad = await gql(t, `mutation { createWebhook(input: { name: "x", url: "http://example.com", events: [SCAN_FAILED], secret: "k" }) { id } }`);
    expect(codesOf(bad)).toEqual(["BAD_USER_INPUT"]);
    expect(bad.body.errors[0].extensions.errors.map((e: { path: string }) => e.path)).toContain("url");

    const list = await gql(t, `{ webhooks { totalCount edges { node { id secret } } } }`);
    expect(list.body.data.webhooks).toEqual({ totalCount: 1, edges: [{ node: { id: hook.id, secret: "********" } }] });
    expect((await gql(t, `mutation($id: ID!) { deleteWebhook(id: $id) }`, { id: hook.id })).body.data.deleteWebhook).toBe(hook.id);
    expect(codesOf(await gql(t, `query($id: ID!) { webhook(id: $id) { id } }`, { id: hook.id }))).toEqual(["NOT_FOUND"]);
    const noScope = await t.token(["applications:read"]);
    expect(codesOf(await gql(t, `{ webhooks { totalCount } }`, undefined, { token: noScope }))).toEqual(["FORBIDDEN"]);
  });
});
