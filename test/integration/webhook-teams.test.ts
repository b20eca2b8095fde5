// Webhook subscriptions' teams (docs/spec/CONTRACT.md §17): a confined token names some of its own
// teams (all of them by default), and lists, counts, reads, changes, deletes and reaches the
// deliveries of only subscriptions all of whose teams are its own; an org-wide token's default is
// every application (teams null). Each test has teams of its own, so the others' subscriptions
// are in every list and must stay out of it.
import { fanOutEvents } from "../../src/dispatcher/fan-out.ts";
import { recordEvent } from "../../src/events/outbox.ts";
import { codesOf, gql } from "../helpers/graphql.ts";
import { sampleEvent } from "../helpers/sample-events.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ AUTH_TEAMS_CLAIM: "teams" });
});
afterAll(() => t.close());

const SCOPES = ["scans:read", "webhooks:read", "webhooks:write"];
let n = 0;

/** Two teams of the test's own, and tokens for each, for both, and for none. */
async function teams() {
  const [a, b] = [`a-${++n}`, `b-${n}`];
  return {
    a,
    b,
    tokenA: await t.token(SCOPES, `alice-${n}`, [a]),
    tokenB: await t.token(SCOPES, `bob-${n}`, [b]),
    tokenAB: await t.token(SCOPES, `abe-${n}`, [a, b]),
    tokenNone: await t.token(SCOPES, `nina-${n}`, []),
  };
}

const create = (token: string | undefined, teams?: unknown) =>
  t.request("POST", "/webhooks", {
    token,
    body: {
      name: "hook",
      url: "https://hooks.example.com/in",
      events: ["scan.completed"],
      secret: "a-secret",
      ...(teams !== undefined && { teams }),
    },
  });

async function hook(token: string | undefined, teams?: unknown): Promise<string> {
  const res = await create(token, teams);
  expect(res.status).toBe(201);
  return res.body.id as string;
}

/** Every subscription GET /webhooks lists for `token`, a page of one at a time. */
async function listed(token: string): Promise<string[]> {
  const ids: string[] = [];
  let path: string | undefined = "/webhooks?limit=1";
  while (path) {
    const res = await t.request("GET", path, { token });
    expect(res.status).toBe(200);
    ids.push(...res.body.map((w: { id: string }) => w.id));
    const next = /<([^>]+)>; rel="next"/.exec(res.headers.get("link") ?? "")?.[1];
    path = next && next.slice(t.baseUrl.length);
  }
  return ids;
}

describe("creating", () => {
  it("gives a confined caller's subscription its teams by default, sorted, or the ones it names of its own", async () => {
    const { a, b, tokenA, tokenAB } = await teams();
    expect((await create(tokenA)).body.teams).toEqual([a]);
    expect((await create(tokenAB)).body.teams).toEqual([a, b].sort());
    expect((await create(tokenAB, [b, a, b])).body.teams).toEqual([a, b].sort());
    const subset = await create(tokenAB, [b]);
    expect(subset.status).toBe(201);
    expect(subset.body.teams).toEqual([b]);
    expect((await t.request("GET", `/webhooks/${subset.body.id}`, { token: tokenAB })).body.teams).toEqual([b]);
  });

  it("refuses a confined caller another team, every application, or no team (403)", async () => {
    const { a, b, tokenA, tokenNone } = await teams();
    for (const named of [[b], [a, b], null, []]) {
      const res = await create(tokenA, named);
      expect([named, res.status]).toEqual([named, 403]);
    }
    expect((await create(tokenNone)).status).toBe(403);
    expect((await create(await t.token(["webhooks:read"], "reader", [a]), [b])).body.detail).toMatch(/webhooks:write/);
  });

  it("gives an org-wide caller's every application (null) by default, and any teams it names", async () => {
    const { a } = await teams();
    const plain = await create(undefined);
    expect(plain.status).toBe(201);
    expect(plain.body.teams).toBeNull();
    expect((await create(undefined, ["zeta", a])).body.teams).toEqual([a, "zeta"].sort());
    expect((await create(undefined, null)).body.teams).toBeNull();
  });

  it("answers teams that are not a list of names with 400 naming teams", async () => {
    for (const bad of ["solo", [""], [42], Array.from({ length: 101 }, (_, i) => `t${i}`)]) {
      const res = await create(undefined, bad);
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: { path: string }) => e.path)[0]).toMatch(/^teams/);
    }
  });

  it("takes teams through GraphQL as REST does", async () => {
    const { a, b, tokenA } = await teams();
    const CREATE = `mutation($i: CreateWebhookInput!) { createWebhook(input: $i) { id teams } }`;
    const input = (teams?: string[]) => ({
      i: { name: "gql", url: "https://hooks.example.com/in", events: ["SCAN_COMPLETED"], secret: "s", teams },
    });
    expect((await gql(t, CREATE, input(), { token: tokenA })).body.data.createWebhook.teams).toEqual([a]);
    expect(codesOf(await gql(t, CREATE, input([b]), { token: tokenA }))).toEqual(["FORBIDDEN"]);
    expect((await gql(t, CREATE, input())).body.data.createWebhook.teams).toBeNull();
  });
});

describe("reaching subscriptions", () => {
  it("lists, counts and reads for a confined token only the subscriptions all of whose teams are its own", async () => {
    const { a, b, tokenA, tokenB, tokenAB } = await teams();
    const ofA = await hook(tokenA);
    const ofB = await hook(tokenB);
    const ofBoth = await hook(tokenAB);
    const givenA = await hook(undefined, [a]);
    const everyApplication = await hook(undefined);

    expect(new Set(await listed(tokenA))).toEqual(new Set([ofA, givenA]));
    expect(new Set(await listed(tokenB))).toEqual(new Set([ofB]));
    expect(new Set(await listed(tokenAB))).toEqual(new Set([ofA, ofB, ofBoth, givenA]));
    const everything = await listed((await t.token())!);
    expect([ofA, ofB, ofBoth, givenA, everyApplication].every((id) => everything.includes(id))).toBe(true);

    const COUNT = `{ webhooks(first: 10) { totalCount edges { node { id teams } } } }`;
    const counted = (await gql(t, COUNT, undefined, { token: tokenA })).body.data.webhooks;
    expect(counted.totalCount).toBe(2);
    expect(new Set(counted.edges.map((e: { node: { id: string } }) => e.node.id))).toEqual(new Set([ofA, givenA]));
    expect(counted.edges.map((e: { node: { teams: string[] } }) => e.node.teams)).toEqual([[a], [a]]);

    for (const other of [ofB, ofBoth, everyApplication]) {
      expect((await t.request("GET", `/webhooks/${other}`, { token: tokenA })).status).toBe(404);
      const one = await gql(t, `query($id: ID!) { webhook(id: $id) { id } }`, { id: other }, { token: tokenA });
      expect(codesOf(one)).toEqual(["NOT_FOUND"]);
    }
    const own = await t.request("GET", `/webhooks/${ofA}`, { token: tokenA });
    expect(own.status).toBe(200);
    expect(own.body.teams).toEqual([a]);
    expect((await t.request("GET", `/webhooks/${ofBoth}`, { token: tokenAB })).body.teams).toEqual([a, b].sort());
  });

  it("lets a confined token change and delete only its own, and change teams only to its own", async () => {
    const { a, b, tokenA, tokenB, tokenAB } = await teams();
    const ofA = await hook(tokenA);
    const ofB = await hook(tokenB);
    const everyApplication = await hook(undefined);
    const put = (id: string, body: object, token?: string) => t.request("PUT", `/webhooks/${id}`, { token, body });

    for (const other of [ofB, everyApplication]) {
      expect((await put(other, { name: "mine now" }, tokenA)).status).toBe(404);
      expect((await t.request("DELETE", `/webhooks/${other}`, { token: tokenA })).status).toBe(404);
    }
    expect((await t.request("GET", `/webhooks/${ofB}`, { token: tokenB })).body.name).toBe("hook");

    expect((await put(ofA, { teams: [b] }, tokenA)).status).toBe(403);
    expect((await put(ofA, { teams: null }, tokenA)).status).toBe(403);
    expect((await put(ofA, { teams: [] }, tokenA)).status).toBe(403);
    const renamed = await put(ofA, { name: "renamed" }, tokenA);
    expect(renamed.status).toBe(200);
    expect(renamed.body.teams).toEqual([a]);
    // A GET result sent back whole changes nothing.
    const got = await t.request("GET", `/webhooks/${ofA}`, { token: tokenA });
    expect((await put(ofA, got.body, tokenA)).body).toEqual({
      ...got.body,
      createdAt: undefined,
      updatedAt: expect.any(String),
    });

    const widened = await put(ofA, { teams: [b, a] }, tokenAB);
    expect(widened.status).toBe(200);
    expect(widened.body.teams).toEqual([a, b].sort());
    expect((await t.request("GET", `/webhooks/${ofA}`, { token: tokenA })).status).toBe(404);
    expect((await put(everyApplication, { teams: [a] })).body.teams).toEqual([a]);
    expect((await t.request("DELETE", `/webhooks/${everyApplication}`, { token: tokenA })).status).toBe(204);
    expect((await t.request("GET", `/webhooks/${everyApplication}`)).status).toBe(404);

    const UPDATE = `mutation($id: ID!, $i: UpdateWebhookInput!) { updateWebhook(id: $id, input: $i) { id teams } }`;
    expect(codesOf(await gql(t, UPDATE, { id: ofB, i: { name: "x" } }, { token: tokenA }))).toEqual(["NOT_FOUND"]);
    const DELETE = `mutation($id: ID!) { deleteWebhook(id: $id) }`;
    expect(codesOf(await gql(t, DELETE, { id: ofB }, { token: tokenA }))).toEqual(["NOT_FOUND"]);
    expect((await gql(t, DELETE, { id: ofB }, { token: tokenB })).body.data.deleteWebhook).toBe(ofB);
  });

  it("keeps the deliveries of another team's subscription out of reach, and fans out to each only its teams' events", async () => {
    const { b, tokenA, tokenB } = await teams();
    const ofA = await hook(tokenA);
    const ofB = await hook(tokenB);
    const everyApplication = await hook(undefined);
    const appOfB = (await t.request("POST", "/applications", { body: { name: `hooks-${b}`, owner: b } })).body.id;
    const eventId = await t.app.db.prisma.$transaction((tx) =>
      recordEvent(tx, "scan.completed", sampleEvent("scan.completed", appOfB, 0).data as never, {
        applicationId: appOfB,
      }),
    );
    await fanOutEvents(t.app.db.pool, 1000);
    const deliveriesOf = async (id: string, token?: string) =>
      (await t.request("GET", `/webhooks/${id}/deliveries`, { token })).body.map((d: { eventId: string }) => d.eventId);
    expect(await deliveriesOf(ofB, tokenB)).toEqual([eventId]);
    expect(await deliveriesOf(everyApplication)).toContain(eventId);
    expect(await deliveriesOf(ofA, tokenA)).toEqual([]);
    const [delivery] = (await t.request("GET", `/webhooks/${ofB}/deliveries`, { token: tokenB })).body;
    // Sent: a pending one would not be redelivered (409).
    await t.app.db.pool.query(
      "UPDATE webhook_deliveries SET status = 'delivered', next_attempt_at = NULL WHERE id = $1",
      [delivery.id],
    );

    const doors = [
      ["GET", `/webhooks/${ofB}/deliveries`],
      ["GET", `/webhooks/${ofB}/deliveries/${delivery.id}`],
      ["POST", `/webhooks/${ofB}/deliveries/${delivery.id}/redeliver`],
      ["POST", `/webhooks/${ofB}/recover`, { since: "2000-01-01T00:00:00Z" }],
    ] as const;
    for (const [method, path, body] of doors) {
      expect([path, (await t.request(method, path, { token: tokenA, body })).status]).toEqual([path, 404]);
    }
    for (const [method, path, body] of doors) {
      expect([path, (await t.request(method, path, { token: tokenB, body })).status]).toEqual([
        path,
        method === "GET" ? 200 : 202,
      ]);
    }
    const viaGraphql = await gql(
      t,
      `mutation($w: ID!, $d: ID!) { redeliverWebhookDelivery(webhookId: $w, deliveryId: $d) { id } }`,
      { w: ofB, d: delivery.id },
      { token: tokenA },
    );
    expect(codesOf(viaGraphql)).toEqual(["NOT_FOUND"]);
  });

  it("sends again only what the subscription's teams see now", async () => {
    const { a, b, tokenA, tokenB } = await teams();
    const moving = await hook(undefined, [b]);
    const appOfB = (await t.request("POST", "/applications", { body: { name: `moving-${b}`, owner: b } })).body.id;
    await t.app.db.prisma.$transaction((tx) =>
      recordEvent(tx, "scan.completed", sampleEvent("scan.completed", appOfB, 0).data as never, {
        applicationId: appOfB,
      }),
    );
    await fanOutEvents(t.app.db.pool, 1000);
    const [delivery] = (await t.request("GET", `/webhooks/${moving}/deliveries`, { token: tokenB })).body;
    await t.app.db.pool.query("UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL WHERE id = $1", [
      delivery.id,
    ]);
    const recover = (token: string) =>
      t.request("POST", `/webhooks/${moving}/recover`, { token, body: { since: "2000-01-01T00:00:00Z" } });

    // Now team a's: b's event is neither redelivered nor recovered to it.
    expect((await t.request("PUT", `/webhooks/${moving}`, { body: { teams: [a] } })).status).toBe(200);
    const redelivered = await t.request("POST", `/webhooks/${moving}/deliveries/${delivery.id}/redeliver`, {
      token: tokenA,
    });
    expect(redelivered.status).toBe(409);
    expect((await recover(tokenA)).body).toEqual({ deliveries: 0 });

    // Team b's again: both send it.
    expect((await t.request("PUT", `/webhooks/${moving}`, { body: { teams: [b] } })).status).toBe(200);
    expect((await recover(tokenB)).body).toEqual({ deliveries: 1 });
    // Once the recovered copy was sent (while it is pending a redelivery is 409).
    await t.app.db.pool.query(
      "UPDATE webhook_deliveries SET status = 'delivered', next_attempt_at = NULL WHERE webhook_id = $1 AND status = 'pending'",
      [moving],
    );
    expect(
      (await t.request("POST", `/webhooks/${moving}/deliveries/${delivery.id}/redeliver`, { token: tokenB })).status,
    ).toBe(202);
  });
});

describe("with team access off", () => {
  it("shows a subscription's teams as null unless it names some: then it is for those owners' applications", async () => {
    const off = await startTestApp();
    try {
      const body = { name: "off", url: "https://hooks.example.com/in", events: ["scan.completed"], secret: "s" };
      const created = await off.request("POST", "/webhooks", { body: { ...body, teams: null } });
      expect(created.status).toBe(201);
      expect(created.body.teams).toBeNull();
      const named = await off.request("POST", "/webhooks", { body: { ...body, teams: ["b", "a"] } });
      expect(named.status).toBe(201);
      expect(named.body.teams).toEqual(["a", "b"]);
      expect((await off.request("GET", "/webhooks")).body.map((w: { teams: unknown }) => w.teams)).toEqual([
        ["a", "b"],
        null,
      ]);
    } finally {
      await off.close();
    }
  });
});
