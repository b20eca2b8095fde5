import { newId } from "../../src/ids.ts";
import { itEnforcesAuthRules, type ProtectedOperation } from "../helpers/auth-rules.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const UNKNOWN_ID = "0190a8c6-0000-7000-8000-000000000000";
const SECRET = "whsec_s3cr3t-value-that-must-never-leak";
const valid = (overrides: Record<string, unknown> = {}) => ({
  name: "ci-hook",
  url: "https://hooks.example.com/appsec",
  events: ["vulnerability.created", "scan.completed"],
  secret: SECRET,
  ...overrides,
});
const create = (body: unknown) => t.request("POST", "/webhooks", { body });
const paths = (res: { body: { errors?: { path: string }[] } }) => (res.body.errors ?? []).map((e) => e.path);
const storedSecret = async (id: string) =>
  t.app.webhookSecrets.open((await t.app.db.prisma.webhook.findUniqueOrThrow({ where: { id } })).sealedSecret, id);

describe("CreateWebhook", () => {
  it("creates an active subscription with a masked secret, a Location and no updatedAt", async () => {
    const res = await create(valid());
    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toBe(`/webhooks/${res.body.id}`);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      name: "ci-hook",
      url: "https://hooks.example.com/appsec",
      events: ["vulnerability.created", "scan.completed"],
      secret: "********",
      status: "active",
      teams: null,
      createdAt: expect.any(String),
    });
    expect(res.text).not.toContain(SECRET);
    expect(await storedSecret(res.body.id)).toBe(SECRET);
  });

  it("ignores read-only fields, status included, and removes duplicate events", async () => {
    const res = await create(
      valid({
        id: "x",
        status: "disabled",
        createdAt: "2000-01-01T00:00:00.000Z",
        events: ["scan.failed", "scan.failed"],
      }),
    );
    expect(res.status).toBe(201);
    expect(res.body.id).not.toBe("x");
    expect(res.body.status).toBe("active");
    expect(res.body.events).toEqual(["scan.failed"]);
  });

  it.each([
    [{ name: undefined }, "name"],
    [{ name: "" }, "name"],
    [{ name: " " }, "name"],
    [{ name: "x".repeat(201) }, "name"],
    [{ url: undefined }, "url"],
    [{ url: "http://hooks.example.com/appsec" }, "url"],
    [{ url: "ftp://hooks.example.com/appsec" }, "url"],
    [{ url: "not a url" }, "url"],
    [{ url: "https://user:pass@hooks.example.com/" }, "url"],
    [{ url: `https://hooks.example.com/${"a".repeat(2048)}` }, "url"],
    [{ url: "https://127.0.0.1/x" }, "url"],
    [{ url: "https://10.0.0.1/" }, "url"],
    [{ url: "https://[::1]/" }, "url"],
    [{ url: "https://localhost/" }, "url"],
    [{ events: undefined }, "events"],
    [{ events: [] }, "events"],
    [{ events: "scan.completed" }, "events"],
    [{ events: ["scan.completed", "scan.exploded"] }, "events[1]"],
    [{ secret: undefined }, "secret"],
    [{ secret: "" }, "secret"],
    [{ secret: 42 }, "secret"],
    [{ secret: "s".repeat(1025) }, "secret"],
    [{ secret: "********" }, "secret"],
    [{ retries: 3 }, "retries"],
  ])("answers 400 for %j", async (overrides, path) => {
    const res = await create(valid(overrides));
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 400, code: "validation_failed" });
    expect(paths(res)).toContain(path);
    expect(res.text).not.toContain(SECRET);
  });

  it("reports every problem at once, the url policy included", async () => {
    const res = await create(valid({ url: "https://10.0.0.1/", events: ["scan.done"], name: "" }));
    expect(res.status).toBe(400);
    expect([...new Set(paths(res))].sort()).toEqual(["events[0]", "name", "url"]);
  });

  it("answers 400 for a body that is not an object", async () => {
    expect((await create([])).status).toBe(400);
    expect((await create(null)).status).toBe(400);
    expect((await t.request("POST", "/webhooks")).status).toBe(400);
  });

  it("does not require unique names", async () => {
    expect((await create(valid({ name: "same" }))).status).toBe(201);
    expect((await create(valid({ name: "same" }))).status).toBe(201);
  });
});

describe("Private targets", () => {
  let open: TestApp;
  beforeAll(async () => {
    open = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: "true" });
  });
  afterAll(() => open.close());

  it.each(["https://127.0.0.1/x", "https://10.0.0.1/", "https://[::1]/"])(
    "accepts %s when WEBHOOK_ALLOW_PRIVATE_TARGETS=true",
    async (url) => {
      const res = await open.request("POST", "/webhooks", { body: valid({ url }) });
      expect(res.status).toBe(201);
      expect(res.body.url).toBe(url);
    },
  );

  it("still refuses http:// there", async () => {
    const res = await open.request("POST", "/webhooks", { body: valid({ url: "http://127.0.0.1/x" }) });
    expect(res.status).toBe(400);
    expect(paths(res)).toEqual(["url"]);
  });

  it("refuses a private url on update when they are not allowed", async () => {
    const created = await create(valid());
    const res = await t.request("PUT", `/webhooks/${created.body.id}`, { body: { url: "https://10.0.0.1/" } });
    expect(res.status).toBe(400);
    expect(paths(res)).toEqual(["url"]);
  });
});

describe("GetWebhook and ListWebhooks", () => {
  it("reads back both timestamps and a masked secret", async () => {
    const created = await create(valid({ name: "readable" }));
    const res = await t.request("GET", `/webhooks/${created.body.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...created.body, updatedAt: created.body.createdAt });
    expect(res.text).not.toContain(SECRET);
    const list = await t.request("GET", "/webhooks?limit=500");
    expect(list.status).toBe(200);
    expect(list.body.find((w: { id: string }) => w.id === created.body.id)).toEqual(res.body);
    expect(list.body.every((w: { secret: string }) => w.secret === "********")).toBe(true);
    expect(list.text).not.toContain(SECRET);
  });

  it.each([UNKNOWN_ID, "not-a-uuid"])("answers 404 for %s", async (id) => {
    const res = await t.request("GET", `/webhooks/${id}`);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("not_found");
  });

  it("pages newest first with Link rel=next", async () => {
    const list = await startTestApp();
    try {
      for (const name of ["w1", "w2", "w3"]) {
        expect((await list.request("POST", "/webhooks", { body: valid({ name }) })).status).toBe(201);
      }
      const first = await list.request("GET", "/webhooks?limit=2");
      expect(first.body.map((w: { name: string }) => w.name)).toEqual(["w3", "w2"]);
      const next = new URL(/^<([^>]+)>; rel="next"$/.exec(first.headers.get("link")!)![1]!);
      const second = await list.request("GET", next.pathname + next.search);
      expect(second.body.map((w: { name: string }) => w.name)).toEqual(["w1"]);
      expect(second.headers.get("link")).toBeNull();
      expect((await list.request("GET", "/webhooks?limit=0")).status).toBe(400);
      expect((await list.request("GET", "/webhooks?cursor=bogus")).status).toBe(400);
    } finally {
      await list.close();
    }
  });
});

describe("UpdateWebhook", () => {
  it("merges, keeps the secret when omitted or masked, and answers without createdAt", async () => {
    const created = await create(valid({ name: "upd" }));
    const url = `/webhooks/${created.body.id}`;
    const renamed = await t.request("PUT", url, { body: { name: "renamed", events: ["policy.violated"] } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({
      id: created.body.id,
      name: "renamed",
      url: created.body.url,
      events: ["policy.violated"],
      secret: "********",
      status: "active",
      teams: null,
      updatedAt: expect.any(String),
    });
    expect(await storedSecret(created.body.id)).toBe(SECRET);

    // A GET result sent back whole (masked secret, read-only fields) changes nothing.
    const got = await t.request("GET", url);
    const back = await t.request("PUT", url, { body: got.body });
    expect(back.status).toBe(200);
    expect(back.body).not.toHaveProperty("createdAt");
    expect(await storedSecret(created.body.id)).toBe(SECRET);

    const rotated = await t.request("PUT", url, { body: { secret: "a-brand-new-secret" } });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toBe("********");
    expect(rotated.text).not.toContain("a-brand-new-secret");
    expect(await storedSecret(created.body.id)).toBe("a-brand-new-secret");
  });

  it("switches a subscription off and on", async () => {
    const created = await create(valid());
    const url = `/webhooks/${created.body.id}`;
    expect((await t.request("PUT", url, { body: { status: "disabled" } })).body.status).toBe("disabled");
    expect((await t.request("GET", url)).body.status).toBe("disabled");
    expect((await t.request("PUT", url, { body: { status: "active" } })).body.status).toBe("active");
  });

  it("refuses to set error, but accepts it sent back unchanged", async () => {
    const created = await create(valid());
    const url = `/webhooks/${created.body.id}`;
    const res = await t.request("PUT", url, { body: { status: "error" } });
    expect(res.status).toBe(400);
    expect(paths(res)).toEqual(["status"]);
    expect((await t.request("GET", url)).body.status).toBe("active");

    await t.app.db.prisma.webhook.update({ where: { id: created.body.id }, data: { status: "error" } });
    const got = await t.request("GET", url);
    const back = await t.request("PUT", url, { body: got.body });
    expect(back.status).toBe(200);
    expect(back.body.status).toBe("error");
  });

  it("cancels pending deliveries when disabled, in the same write", async () => {
    const hook = await create(valid());
    const other = await create(valid({ name: "other" }));
    const prisma = t.app.db.prisma;
    const now = new Date();
    const event = await prisma.event.create({
      data: { id: newId(), type: "scan.completed", data: {}, occurredAt: now },
    });
    const delivery = (webhookId: string, status: "pending" | "delivered") =>
      prisma.webhookDelivery.create({
        data: { id: newId(), webhookId, eventId: event.id, status, nextAttemptAt: now, createdAt: now, updatedAt: now },
      });
    const pending = await delivery(hook.body.id, "pending");
    const delivered = await delivery(hook.body.id, "delivered");
    const othersPending = await delivery(other.body.id, "pending");

    const res = await t.request("PUT", `/webhooks/${hook.body.id}`, { body: { status: "disabled" } });
    expect(res.status).toBe(200);
    const statusOf = async (id: string) => (await prisma.webhookDelivery.findUniqueOrThrow({ where: { id } })).status;
    expect(await statusOf(pending.id)).toBe("cancelled");
    expect(await statusOf(delivered.id)).toBe("delivered");
    expect(await statusOf(othersPending.id)).toBe("pending");
  });

  it("answers 400 for an invalid body and 404 for an unknown id", async () => {
    const created = await create(valid());
    const url = `/webhooks/${created.body.id}`;
    for (const body of [
      { url: "http://hooks.example.com/" },
      { events: [] },
      { events: ["nope"] },
      { name: null },
      { secret: null },
      { secret: "" },
      { status: "paused" },
      { colour: "red" },
      [],
      "text",
    ]) {
      const res = await t.request("PUT", url, { body });
      expect(res.status).toBe(400);
    }
    expect((await t.request("PUT", `/webhooks/${UNKNOWN_ID}`, { body: {} })).status).toBe(404);
    expect((await t.request("PUT", "/webhooks/nope", { body: {} })).status).toBe(404);
    const unchanged = await t.request("GET", url);
    expect(unchanged.body).toEqual({ ...created.body, updatedAt: created.body.createdAt });
  });
});

describe("DeleteWebhook", () => {
  it("answers 204 with no body, removes its deliveries, then 404", async () => {
    const created = await create(valid());
    const prisma = t.app.db.prisma;
    const now = new Date();
    const event = await prisma.event.create({
      data: { id: newId(), type: "scan.completed", data: {}, occurredAt: now },
    });
    await prisma.webhookDelivery.create({
      data: { id: newId(), webhookId: created.body.id, eventId: event.id, createdAt: now, updatedAt: now },
    });
    const res = await t.request("DELETE", `/webhooks/${created.body.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expect(await prisma.webhookDelivery.count({ where: { webhookId: created.body.id } })).toBe(0);
    expect((await t.request("GET", `/webhooks/${created.body.id}`)).status).toBe(404);
    expect((await t.request("DELETE", `/webhooks/${created.body.id}`)).status).toBe(404);
    expect((await t.request("DELETE", "/webhooks/nope")).status).toBe(404);
  });
});

describe("Authentication and scopes", () => {
  const operations: ProtectedOperation[] = [
    ["GET", "/webhooks", "webhooks:read", undefined],
    ["POST", "/webhooks", "webhooks:write", valid()],
    ["GET", `/webhooks/${UNKNOWN_ID}`, "webhooks:read", undefined],
    ["PUT", `/webhooks/${UNKNOWN_ID}`, "webhooks:write", {}],
    ["DELETE", `/webhooks/${UNKNOWN_ID}`, "webhooks:write", undefined],
  ];

  itEnforcesAuthRules(() => t, operations, "policies:write");

  it("needs the read scope of every event type a subscription carries", async () => {
    const body = { ...valid(), events: ["scan.completed", "vulnerability.created"] };
    const scansOnly = await t.token(["webhooks:write", "scans:read"]);
    const denied = await t.request("POST", "/webhooks", { token: scansOnly, body });
    expect(denied.status).toBe(403);
    expect(denied.headers.get("www-authenticate")).toBe(
      'Bearer error="insufficient_scope", scope="vulnerabilities:read"',
    );
    const both = await t.token(["webhooks:write", "scans:read", "vulnerabilities:read"]);
    const created = await t.request("POST", "/webhooks", { token: both, body });
    expect(created.status).toBe(201);
    const widen = await t.request("PUT", `/webhooks/${created.body.id}`, {
      token: scansOnly,
      body: { events: ["policy.violated"] },
    });
    expect(widen.status).toBe(403);
    expect(widen.headers.get("www-authenticate")).toBe('Bearer error="insufficient_scope", scope="policies:read"');
    // Nor may it point the existing subscription elsewhere: it would carry vulnerabilities there.
    const redirect = await t.request("PUT", `/webhooks/${created.body.id}`, {
      token: scansOnly,
      body: { url: "https://elsewhere.example.com/" },
    });
    expect(redirect.status).toBe(403);
    expect(redirect.headers.get("www-authenticate")).toBe(
      'Bearer error="insufficient_scope", scope="vulnerabilities:read"',
    );
    const narrowed = await t.request("PUT", `/webhooks/${created.body.id}`, {
      token: scansOnly,
      body: { events: ["scan.completed"] },
    });
    expect(narrowed.status).toBe(200);
  });

  it("lets webhooks:read read and webhooks:write write", async () => {
    const writer = await t.token(["webhooks:write", "scans:read", "vulnerabilities:read", "policies:read"]);
    const reader = await t.token(["webhooks:read"]);
    const created = await t.request("POST", "/webhooks", { token: writer, body: valid() });
    expect(created.status).toBe(201);
    expect((await t.request("GET", `/webhooks/${created.body.id}`, { token: reader })).status).toBe(200);
    expect((await t.request("GET", "/webhooks", { token: reader })).status).toBe(200);
    expect((await t.request("PUT", `/webhooks/${created.body.id}`, { token: writer, body: {} })).status).toBe(200);
    expect((await t.request("DELETE", `/webhooks/${created.body.id}`, { token: writer })).status).toBe(204);
  });
});
