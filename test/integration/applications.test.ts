import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const create = (body: unknown) => t.request("POST", "/applications", { body });

describe("CreateApplication", () => {
  it("creates with defaults, equal timestamps and a Location", async () => {
    const res = await create({ name: "payments-api", tags: ["pci", "edge", "pci"] });
    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toBe(`/applications/${res.body.id}`);
    expect(res.body).toMatchObject({
      name: "payments-api",
      criticality: "medium",
      description: null,
      owner: null,
      tags: ["pci", "edge"],
    });
    expect(res.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(res.body.createdAt).toBe(res.body.updatedAt);
  });

  it("ignores read-only fields so a GET result can be sent back", async () => {
    const res = await create({ name: "ro-fields", id: "x", createdAt: "2000-01-01T00:00:00Z", updatedAt: "y" });
    expect(res.status).toBe(201);
    expect(res.body.id).not.toBe("x");
    expect(res.body.createdAt).not.toBe("2000-01-01T00:00:00.000Z");
  });

  it.each([
    [{}, "name"],
    [{ name: "" }, "name"],
    [{ name: "   " }, "name"],
    [{ name: "x".repeat(201) }, "name"],
    [{ name: 42 }, "name"],
    [{ name: "a", criticality: "severe" }, "criticality"],
    [{ name: "a", repoUrl: "ftp://example.com/x" }, "repoUrl"],
    [{ name: "a", repoUrl: "not a url" }, "repoUrl"],
    [{ name: "a", tags: "pci" }, "tags"],
    [{ name: "a", tags: [""] }, "tags[0]"],
    [{ name: "a", tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }, "tags"],
    [{ name: "a", description: "d".repeat(10_001) }, "description"],
    [{ name: "a", colour: "blue" }, "colour"],
  ])("answers 400 for %j", async (body, path) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 400, code: "validation_failed", type: "/problems/validation_failed" });
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it("accepts 50 distinct tags after removing duplicates", async () => {
    const tags = [...Array.from({ length: 50 }, (_, i) => `t${i}`), "t0"];
    const res = await create({ name: "many-tags", tags });
    expect(res.status).toBe(201);
    expect(res.body.tags).toHaveLength(50);
  });

  it("answers 409 for a duplicate name", async () => {
    expect((await create({ name: "dup" })).status).toBe(201);
    const res = await create({ name: "dup" });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("conflict");
  });

  it("lets exactly one of 20 concurrent creates of one name win", async () => {
    const results = await Promise.all(Array.from({ length: 20 }, () => create({ name: "racy" })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
  });
});

describe("GetApplication", () => {
  it("reads back what was created", async () => {
    const created = await create({ name: "get-me", owner: "team-a", language: "go" });
    const res = await t.request("GET", `/applications/${created.body.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created.body);
  });

  it.each(["0190a8c6-0000-7000-8000-000000000000", "not-a-uuid", "1", "%E2%82%AC"])(
    "answers 404 for %s",
    async (id) => {
      const res = await t.request("GET", `/applications/${id}`);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("not_found");
    },
  );
});

describe("UpdateApplication", () => {
  it("merges: supplied fields overwrite, omitted are kept, null clears", async () => {
    const created = await create({ name: "upd", owner: "team-a", description: "first", tags: ["a"] });
    const res = await t.request("PUT", `/applications/${created.body.id}`, {
      body: { description: null, criticality: "critical", tags: ["b"] },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: "upd",
      owner: "team-a",
      description: null,
      criticality: "critical",
      tags: ["b"],
    });
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.body.updatedAt));
    expect(res.body.createdAt).toBe(created.body.createdAt);
    const again = await t.request("GET", `/applications/${created.body.id}`);
    expect(again.body).toEqual(res.body);
  });

  it("accepts a GET result sent back unchanged", async () => {
    const created = await create({ name: "roundtrip", tags: ["x"] });
    const res = await t.request("PUT", `/applications/${created.body.id}`, { body: created.body });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe("roundtrip");
  });

  it("answers 400 for an invalid body, 404 for an unknown id, 409 for a taken name", async () => {
    const a = await create({ name: "upd-a" });
    await create({ name: "upd-b" });
    expect((await t.request("PUT", `/applications/${a.body.id}`, { body: { criticality: "x" } })).status).toBe(400);
    expect((await t.request("PUT", `/applications/${a.body.id}`, { body: [] })).status).toBe(400);
    expect((await t.request("PUT", `/applications/${a.body.id}`, { body: "text" })).status).toBe(400);
    expect((await t.request("PUT", "/applications/0190a8c6-0000-7000-8000-000000000000", { body: {} })).status).toBe(
      404,
    );
    const clash = await t.request("PUT", `/applications/${a.body.id}`, { body: { name: "upd-b" } });
    expect(clash.status).toBe(409);
  });
});

describe("DeleteApplication", () => {
  it("answers 204 with no body, then 404", async () => {
    const created = await create({ name: "del" });
    const res = await t.request("DELETE", `/applications/${created.body.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expect((await t.request("GET", `/applications/${created.body.id}`)).status).toBe(404);
    expect((await t.request("DELETE", `/applications/${created.body.id}`)).status).toBe(404);
  });
});

describe("DeleteApplication while a scan of it completes", () => {
  it("waits for the completing scan instead of deadlocking", async () => {
    const app = await create({ name: "deleted-while-scanned" });
    const scan = await t.request("POST", `/applications/${app.body.id}/scans`, { body: { scanType: "sast" } });
    expect(scan.status).toBe(202);
    // What a completing scan does: hold its scan row, then touch the application (the vulnerability
    // inserts' foreign-key checks take FOR KEY SHARE on it).
    const completing = await t.app.db.pool.connect();
    try {
      await completing.query("BEGIN");
      await completing.query("SELECT id FROM scans WHERE id = $1 FOR UPDATE", [scan.body.id]);
      const deletion = t.request("DELETE", `/applications/${app.body.id}`);
      await new Promise((r) => setTimeout(r, 200)); // the delete is now waiting on a lock
      await completing.query("SELECT id FROM applications WHERE id = $1 FOR KEY SHARE", [app.body.id]);
      await completing.query("COMMIT");
      expect((await deletion).status).toBe(204);
    } finally {
      completing.release();
    }
    expect((await t.request("GET", `/applications/${app.body.id}`)).status).toBe(404);
  });
});

describe("ListApplications", () => {
  let list: TestApp;
  beforeAll(async () => {
    list = await startTestApp();
    const apps = [
      { name: "l1", owner: "red", criticality: "high", tags: ["pci", "web"] },
      { name: "l2", owner: "red", criticality: "low", tags: ["web"] },
      { name: "l3", owner: "blue", criticality: "high", tags: ["pci"] },
      { name: "l4", owner: "blue", criticality: "critical", tags: [] },
      { name: "l5", owner: "red", criticality: "high", tags: ["web"] },
    ];
    for (const body of apps) expect((await list.request("POST", "/applications", { body })).status).toBe(201);
  });
  afterAll(() => list.close());

  const names = async (query: string) => {
    const res = await list.request("GET", `/applications${query}`);
    expect(res.status).toBe(200);
    return res.body.map((a: { name: string }) => a.name);
  };

  it("lists newest first", async () => {
    expect(await names("")).toEqual(["l5", "l4", "l3", "l2", "l1"]);
  });

  it("filters by owner, criticality and tag, combined with AND", async () => {
    expect(await names("?owner=red")).toEqual(["l5", "l2", "l1"]);
    expect(await names("?criticality=high")).toEqual(["l5", "l3", "l1"]);
    expect(await names("?tag=pci")).toEqual(["l3", "l1"]);
    expect(await names("?owner=red&criticality=high")).toEqual(["l5", "l1"]);
    expect(await names("?owner=red&criticality=high&tag=pci")).toEqual(["l1"]);
    expect(await names("?tag=pci&tag=web")).toEqual(["l1"]);
    expect(await names("?criticality=severe")).toEqual([]);
    expect(await names("?owner=nobody")).toEqual([]);
    expect(await names("?owner=red&owner=red")).toEqual(["l5", "l2", "l1"]);
    expect(await names("?owner=red&owner=blue")).toEqual([]);
    expect(await names("?criticality=high&criticality=low")).toEqual([]);
  });

  it("pages without filters through every application once, newest first, equal timestamps ordered by id", async () => {
    const pool = list.app.db.pool;
    const sameInstant = new Date("2026-11-20T12:00:00.123Z");
    const { rows: original } = await pool.query<{ id: string; created_at: Date }>(
      "SELECT id, created_at FROM applications",
    );
    await pool.query("UPDATE applications SET created_at = $1 WHERE name IN ('l2', 'l3', 'l4')", [sameInstant]);
    try {
      const expected = (
        await pool.query<{ name: string }>("SELECT name FROM applications ORDER BY created_at DESC, id DESC")
      ).rows;
      const seen: { id: string; name: string }[] = [];
      let path: string | undefined = "/applications?limit=2";
      while (path) {
        const page = await list.request("GET", path);
        expect(page.status).toBe(200);
        seen.push(...page.body);
        const link = page.headers.get("link");
        const next = link ? new URL(/^<([^>]+)>/.exec(link)![1]!) : undefined;
        path = next && next.pathname + next.search;
      }
      expect(seen.map((a) => a.name)).toEqual(expected.map((r) => r.name));
      // Each item is exactly what GET /applications/{id} answers.
      for (const item of seen) expect((await list.request("GET", `/applications/${item.id}`)).body).toEqual(item);
      expect(seen).toContainEqual(
        expect.objectContaining({
          name: "l3",
          createdAt: sameInstant.toISOString(),
          criticality: "high",
          tags: ["pci"],
        }),
      );
    } finally {
      await pool.query(
        "UPDATE applications a SET created_at = o.created_at FROM unnest($1::uuid[], $2::timestamptz[]) o(id, created_at) WHERE a.id = o.id",
        [original.map((r) => r.id), original.map((r) => r.created_at)],
      );
    }
  });

  it("pages with limit and a Link rel=next that keeps the filters", async () => {
    const first = await list.request("GET", "/applications?owner=red&limit=2");
    expect(first.body.map((a: { name: string }) => a.name)).toEqual(["l5", "l2"]);
    const link = first.headers.get("link")!;
    const next = /^<([^>]+)>; rel="next"$/.exec(link)![1]!;
    const nextUrl = new URL(next);
    expect(nextUrl.searchParams.get("owner")).toBe("red");
    expect(nextUrl.searchParams.get("limit")).toBe("2");
    const second = await list.request("GET", nextUrl.pathname + nextUrl.search);
    expect(second.body.map((a: { name: string }) => a.name)).toEqual(["l1"]);
    expect(second.headers.get("link")).toBeNull();
  });

  it.each(["limit=0", "limit=501", "limit=x", "cursor=bogus"])("answers 400 for %s", async (q) => {
    const res = await list.request("GET", `/applications?${q}`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("validation_failed");
  });
});
