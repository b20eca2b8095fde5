import { itEnforcesAuthRules, type ProtectedOperation } from "../helpers/auth-rules.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const UNKNOWN_ID = "0190a8c6-0000-7000-8000-000000000000";
const create = (body: unknown) => t.request("POST", "/policies", { body });
const createApp = async (name: string): Promise<string> => {
  const res = await t.request("POST", "/applications", { body: { name } });
  expect(res.status).toBe(201);
  return res.body.id;
};
const paths = (res: { body: { errors?: { path: string }[] } }) => (res.body.errors ?? []).map((e) => e.path);

describe("CreatePolicy", () => {
  it("creates with every application and any severity by default, with a Location", async () => {
    const res = await create({ name: "block-all", action: "block" });
    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toBe(`/policies/${res.body.id}`);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      name: "block-all",
      action: "block",
      conditions: { applicationIds: null, vulnerabilitySeverity: null },
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(res.body.createdAt).toBe(res.body.updatedAt);
  });

  it("stores targeted conditions, removing duplicate ids and normalising case", async () => {
    const a = await createApp("pc-a");
    const b = await createApp("pc-b");
    const res = await create({
      name: "targeted",
      action: "monitor",
      conditions: { applicationIds: [a, b.toUpperCase(), a], vulnerabilitySeverity: "high" },
    });
    expect(res.status).toBe(201);
    expect(res.body.conditions).toEqual({ applicationIds: [a, b], vulnerabilitySeverity: "high" });
    expect((await t.request("GET", `/policies/${res.body.id}`)).body).toEqual(res.body);
  });

  it("keeps an empty applicationIds (no application) distinct from null (every application)", async () => {
    const none = await create({ name: "none", action: "allow", conditions: { applicationIds: [] } });
    expect(none.status).toBe(201);
    expect(none.body.conditions).toEqual({ applicationIds: [], vulnerabilitySeverity: null });
    const all = await create({
      name: "all",
      action: "allow",
      conditions: { applicationIds: null, vulnerabilitySeverity: null },
    });
    expect(all.status).toBe(201);
    expect(all.body.conditions).toEqual({ applicationIds: null, vulnerabilitySeverity: null });
    const nullConditions = await create({ name: "null-conditions", action: "allow", conditions: null });
    expect(nullConditions.body.conditions).toEqual({ applicationIds: null, vulnerabilitySeverity: null });
  });

  it("ignores read-only fields", async () => {
    const res = await create({
      name: "ro",
      action: "block",
      id: "x",
      createdAt: "2000-01-01T00:00:00.000Z",
      updatedAt: 1,
    });
    expect(res.status).toBe(201);
    expect(res.body.id).not.toBe("x");
    expect(res.body.createdAt).not.toBe("2000-01-01T00:00:00.000Z");
  });

  it.each([
    [{ action: "block" }, "name"],
    [{ name: "n" }, "action"],
    [{ name: "", action: "block" }, "name"],
    [{ name: "  ", action: "block" }, "name"],
    [{ name: "x".repeat(201), action: "block" }, "name"],
    [{ name: 7, action: "block" }, "name"],
    [{ name: "n", action: "deny" }, "action"],
    [
      { name: "n", action: "block", conditions: { vulnerabilitySeverity: "severe" } },
      "conditions.vulnerabilitySeverity",
    ],
    [{ name: "n", action: "block", conditions: { applicationIds: "x" } }, "conditions.applicationIds"],
    [{ name: "n", action: "block", conditions: { applicationIds: ["not-a-uuid"] } }, "conditions.applicationIds[0]"],
    [{ name: "n", action: "block", conditions: { applicationIds: [42] } }, "conditions.applicationIds[0]"],
    [{ name: "n", action: "block", conditions: { applicationIds: [UNKNOWN_ID] } }, "conditions.applicationIds[0]"],
    [{ name: "n", action: "block", conditions: { severity: "high" } }, "conditions.severity"],
    [{ name: "n", action: "block", conditions: [] }, "conditions"],
    [{ name: "n", action: "block", extra: 1 }, "extra"],
  ])("answers 400 for %j", async (body, path) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 400, code: "validation_failed" });
    expect(paths(res)).toContain(path);
  });

  it("names the position of the unknown application", async () => {
    const a = await createApp("pos-a");
    const res = await create({ name: "pos", action: "block", conditions: { applicationIds: [a, UNKNOWN_ID] } });
    expect(res.status).toBe(400);
    expect(paths(res)).toEqual(["conditions.applicationIds[1]"]);
    expect((await t.request("GET", "/policies?limit=500")).body.map((p: { name: string }) => p.name)).not.toContain(
      "pos",
    );
  });

  it("answers 400 for a body that is not an object, and for malformed JSON", async () => {
    expect((await create([])).status).toBe(400);
    expect((await create("text")).status).toBe(400);
    const malformed = await t.request("POST", "/policies", {
      rawBody: "{",
      headers: { "content-type": "application/json" },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe("malformed_json");
  });

  it("answers 409 for a duplicate name", async () => {
    expect((await create({ name: "dup", action: "block" })).status).toBe(201);
    const res = await create({ name: "dup", action: "allow" });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("conflict");
  });

  it("lets exactly one of 20 concurrent creates of one name win", async () => {
    const results = await Promise.all(Array.from({ length: 20 }, () => create({ name: "racy", action: "block" })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
  });
});

describe("GetPolicy", () => {
  it.each([UNKNOWN_ID, "not-a-uuid", "1"])("answers 404 for %s", async (id) => {
    const res = await t.request("GET", `/policies/${id}`);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("not_found");
  });
});

describe("UpdatePolicy", () => {
  it("merges: supplied fields overwrite, omitted are kept", async () => {
    const app = await createApp("upd-app");
    const created = await create({
      name: "upd",
      action: "block",
      conditions: { applicationIds: [app], vulnerabilitySeverity: "high" },
    });
    const res = await t.request("PUT", `/policies/${created.body.id}`, { body: { action: "monitor" } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: created.body.id,
      name: "upd",
      action: "monitor",
      conditions: created.body.conditions,
    });
    expect(res.body.createdAt).toBe(created.body.createdAt);
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.body.updatedAt));
    expect((await t.request("GET", `/policies/${created.body.id}`)).body).toEqual(res.body);
  });

  it("replaces conditions whole: an omitted member is not kept", async () => {
    const app = await createApp("replace-app");
    const created = await create({
      name: "replace",
      action: "block",
      conditions: { applicationIds: [app], vulnerabilitySeverity: "high" },
    });
    const res = await t.request("PUT", `/policies/${created.body.id}`, {
      body: { conditions: { vulnerabilitySeverity: "low" } },
    });
    expect(res.status).toBe(200);
    expect(res.body.conditions).toEqual({ applicationIds: null, vulnerabilitySeverity: "low" });
  });

  it("clears conditions with null", async () => {
    const app = await createApp("clear-app");
    const created = await create({
      name: "clear",
      action: "block",
      conditions: { applicationIds: [app], vulnerabilitySeverity: "critical" },
    });
    const res = await t.request("PUT", `/policies/${created.body.id}`, { body: { conditions: null } });
    expect(res.status).toBe(200);
    expect(res.body.conditions).toEqual({ applicationIds: null, vulnerabilitySeverity: null });
  });

  it("accepts an empty body and a GET result sent back unchanged", async () => {
    const created = await create({
      name: "roundtrip",
      action: "allow",
      conditions: { vulnerabilitySeverity: "medium" },
    });
    const empty = await t.request("PUT", `/policies/${created.body.id}`, { body: {} });
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ name: "roundtrip", action: "allow", conditions: created.body.conditions });
    const back = await t.request("PUT", `/policies/${created.body.id}`, { body: empty.body });
    expect(back.status).toBe(200);
    expect(back.body.conditions).toEqual(created.body.conditions);
  });

  it("answers 400 for an invalid body or an unknown application, 404 for an unknown id, 409 for a taken name", async () => {
    const a = await create({ name: "upd-a", action: "block" });
    await create({ name: "upd-b", action: "block" });
    const url = `/policies/${a.body.id}`;
    expect((await t.request("PUT", url, { body: { action: "deny" } })).status).toBe(400);
    expect((await t.request("PUT", url, { body: { name: null } })).status).toBe(400);
    expect((await t.request("PUT", url, { body: { colour: "red" } })).status).toBe(400);
    expect((await t.request("PUT", url, { body: [] })).status).toBe(400);
    expect((await t.request("PUT", url, { body: "text" })).status).toBe(400);
    const unknownApp = await t.request("PUT", url, { body: { conditions: { applicationIds: [UNKNOWN_ID] } } });
    expect(unknownApp.status).toBe(400);
    expect(paths(unknownApp)).toEqual(["conditions.applicationIds[0]"]);
    expect((await t.request("PUT", `/policies/${UNKNOWN_ID}`, { body: {} })).status).toBe(404);
    expect((await t.request("PUT", "/policies/nope", { body: {} })).status).toBe(404);
    const clash = await t.request("PUT", url, { body: { name: "upd-b" } });
    expect(clash.status).toBe(409);
    expect((await t.request("GET", url)).body).toEqual(a.body);
  });
});

describe("DeletePolicy", () => {
  it("answers 204 with no body, then 404", async () => {
    const created = await create({ name: "del", action: "block" });
    const res = await t.request("DELETE", `/policies/${created.body.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expect((await t.request("GET", `/policies/${created.body.id}`)).status).toBe(404);
    expect((await t.request("DELETE", `/policies/${created.body.id}`)).status).toBe(404);
    expect((await t.request("DELETE", "/policies/nope")).status).toBe(404);
  });
});

describe("Deleting an application", () => {
  it("removes its id from policies; a policy left with none targets none, not all", async () => {
    const keep = await createApp("del-keep");
    const gone = await createApp("del-gone");
    const shared = await create({ name: "shared", action: "block", conditions: { applicationIds: [keep, gone] } });
    const only = await create({ name: "only", action: "block", conditions: { applicationIds: [gone] } });
    expect((await t.request("DELETE", `/applications/${gone}`)).status).toBe(204);
    expect((await t.request("GET", `/policies/${shared.body.id}`)).body.conditions.applicationIds).toEqual([keep]);
    expect((await t.request("GET", `/policies/${only.body.id}`)).body.conditions.applicationIds).toEqual([]);
  });

  it("cannot leave a dangling id when it races a policy write", async () => {
    const apps = await Promise.all(Array.from({ length: 5 }, (_, i) => createApp(`race-app-${i}`)));
    const results = await Promise.all(
      apps.flatMap((id, i) => [
        t.request("DELETE", `/applications/${id}`),
        create({ name: `race-policy-${i}`, action: "monitor", conditions: { applicationIds: [id] } }),
      ]),
    );
    for (const res of results) expect([201, 204, 400]).toContain(res.status);
    const rows = await t.app.db.prisma.policy.findMany({ where: { name: { startsWith: "race-policy-" } } });
    for (const row of rows) expect(row.applicationIds).toEqual([]);
  });
});

describe("ListPolicies", () => {
  let list: TestApp;
  beforeAll(async () => {
    list = await startTestApp();
    for (const name of ["p1", "p2", "p3"]) {
      expect((await list.request("POST", "/policies", { body: { name, action: "block" } })).status).toBe(201);
    }
  });
  afterAll(() => list.close());

  it("lists newest first, paged with Link rel=next", async () => {
    const all = await list.request("GET", "/policies");
    expect(all.status).toBe(200);
    expect(all.body.map((p: { name: string }) => p.name)).toEqual(["p3", "p2", "p1"]);
    expect(all.headers.get("link")).toBeNull();

    const first = await list.request("GET", "/policies?limit=2");
    expect(first.body.map((p: { name: string }) => p.name)).toEqual(["p3", "p2"]);
    const next = new URL(/^<([^>]+)>; rel="next"$/.exec(first.headers.get("link")!)![1]!);
    const second = await list.request("GET", next.pathname + next.search);
    expect(second.body.map((p: { name: string }) => p.name)).toEqual(["p1"]);
    expect(second.headers.get("link")).toBeNull();
  });

  it.each(["limit=0", "limit=501", "cursor=bogus"])("answers 400 for %s", async (q) => {
    expect((await list.request("GET", `/policies?${q}`)).status).toBe(400);
  });
});

describe("Authentication and scopes", () => {
  const operations: ProtectedOperation[] = [
    ["GET", "/policies", "policies:read", undefined],
    ["POST", "/policies", "policies:write", { name: "scoped", action: "block" }],
    ["GET", `/policies/${UNKNOWN_ID}`, "policies:read", undefined],
    ["PUT", `/policies/${UNKNOWN_ID}`, "policies:write", {}],
    ["DELETE", `/policies/${UNKNOWN_ID}`, "policies:write", undefined],
  ];

  itEnforcesAuthRules(() => t, operations, "applications:read");

  it("lets policies:read read and policies:write write", async () => {
    const writer = await t.token(["policies:write"]);
    const reader = await t.token(["policies:read"]);
    const created = await t.request("POST", "/policies", {
      token: writer,
      body: { name: "scoped-ok", action: "block" },
    });
    expect(created.status).toBe(201);
    expect((await t.request("GET", `/policies/${created.body.id}`, { token: reader })).status).toBe(200);
    expect((await t.request("GET", "/policies", { token: reader })).status).toBe(200);
    expect((await t.request("PUT", `/policies/${created.body.id}`, { token: writer, body: {} })).status).toBe(200);
    expect((await t.request("DELETE", `/policies/${created.body.id}`, { token: writer })).status).toBe(204);
  });
});
