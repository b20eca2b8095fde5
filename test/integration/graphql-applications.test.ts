import { Writable } from "node:stream";
import pino from "pino";
import { codesOf, gql } from "../helpers/graphql.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const APP_FIELDS = "id name description criticality owner repoUrl serviceUrl language tags createdAt updatedAt";
const CREATE = `mutation($input: CreateApplicationInput!) { createApplication(input: $input) { ${APP_FIELDS} } }`;
const UPDATE = `mutation($id: ID!, $input: UpdateApplicationInput!) { updateApplication(id: $id, input: $input) { ${APP_FIELDS} } }`;
const GET = `query($id: ID!) { application(id: $id) { ${APP_FIELDS} } }`;
const LIST = `query($filter: ApplicationFilter, $first: Int, $after: String) {
  applications(filter: $filter, first: $first, after: $after) {
    totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id name } }
  }
}`;

describe("GraphQL applications", () => {
  it("creates through GraphQL and reads the same resource through REST", async () => {
    const res = await gql(t, CREATE, { input: { name: "gql-made", criticality: "HIGH", tags: ["a", "b", "a"] } });
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    const made = res.body.data.createApplication;
    expect(made).toMatchObject({ name: "gql-made", criticality: "HIGH", tags: ["a", "b"], owner: null });

    const rest = await t.request("GET", `/applications/${made.id}`);
    expect(rest.status).toBe(200);
    expect(rest.body).toEqual({ ...made, criticality: "high" });
  });

  it("creates through REST and reads the same resource through GraphQL", async () => {
    const rest = await t.request("POST", "/applications", {
      body: { name: "rest-made", owner: "team-x", criticality: "critical" },
    });
    expect(rest.status).toBe(201);
    const res = await gql(t, GET, { id: rest.body.id });
    expect(res.body.data.application).toEqual({ ...rest.body, criticality: "CRITICAL" });
  });

  it("updates with merge semantics (omitted kept, null clears) and deletes", async () => {
    const made = (await gql(t, CREATE, { input: { name: "to-update", owner: "o", language: "go" } })).body.data
      .createApplication;
    const res = await gql(t, UPDATE, { id: made.id, input: { owner: null, description: "d" } });
    expect(res.body.data.updateApplication).toMatchObject({
      owner: null,
      language: "go",
      description: "d",
      name: "to-update",
    });

    const del = await gql(t, `mutation($id: ID!) { deleteApplication(id: $id) }`, { id: made.id });
    expect(del.body.data.deleteApplication).toBe(made.id);
    expect((await t.request("GET", `/applications/${made.id}`)).status).toBe(404);
  });

  it("answers BAD_USER_INPUT with the same field paths as REST", async () => {
    const res = await gql(t, CREATE, { input: { name: "   ", repoUrl: "ftp://x/y", tags: [""] } });
    expect(codesOf(res)).toEqual(["BAD_USER_INPUT"]);
    const paths = res.body.errors[0].extensions.errors.map((e: { path: string }) => e.path).sort();
    const rest = await t.request("POST", "/applications", { body: { name: "   ", repoUrl: "ftp://x/y", tags: [""] } });
    expect(paths).toEqual(rest.body.errors.map((e: { path: string }) => e.path).sort());
    expect(paths).toEqual(["name", "repoUrl", "tags[0]"]);
  });

  it.each([
    ["a query", LIST, { first: "ten" }, /^Variable "\$first" got invalid value "ten"/],
    ["a query", GET, {}, /^Variable "\$id" of required type "ID!" was not provided/],
    [
      "a mutation",
      CREATE,
      { input: { name: "x", criticality: "SEVERE" } },
      /^Variable "\$input" got invalid value "SEVERE" at "input.criticality"/,
    ],
  ])(
    "answers 400 with BAD_USER_INPUT for variables of %s that do not coerce",
    async (_label, query, variables, message) => {
      const res = await gql(t, query, variables);
      expect(res.status).toBe(400);
      expect(res.body.data).toBeUndefined();
      expect(codesOf(res)).toEqual(["BAD_USER_INPUT"]);
      expect(res.body.errors[0].message).toMatch(message);
      expect(res.body.errors[0].locations).toHaveLength(1);
    },
  );

  it("answers CONFLICT for a duplicate name, on create and on rename", async () => {
    await gql(t, CREATE, { input: { name: "taken" } });
    expect(codesOf(await gql(t, CREATE, { input: { name: "taken" } }))).toEqual(["CONFLICT"]);
    const other = (await gql(t, CREATE, { input: { name: "other" } })).body.data.createApplication;
    expect(codesOf(await gql(t, UPDATE, { id: other.id, input: { name: "taken" } }))).toEqual(["CONFLICT"]);
  });

  it("answers NOT_FOUND for unknown and malformed ids", async () => {
    for (const id of ["0190d6a4-6a2e-7000-8000-000000000000", "nope"]) {
      expect(codesOf(await gql(t, GET, { id }))).toEqual(["NOT_FOUND"]);
      expect(codesOf(await gql(t, `mutation($id: ID!) { deleteApplication(id: $id) }`, { id }))).toEqual(["NOT_FOUND"]);
    }
  });

  it("answers FORBIDDEN without the scope, with the same rule as REST", async () => {
    const readOnly = await t.token(["applications:read"]);
    const res = await gql(t, CREATE, { input: { name: "nope" } }, { token: readOnly });
    expect(codesOf(res)).toEqual(["FORBIDDEN"]);
    expect(res.body.errors[0].extensions.scope).toBe("applications:write");
    const noRead = await t.token(["scans:read"]);
    expect(codesOf(await gql(t, LIST, {}, { token: noRead }))).toEqual(["FORBIDDEN"]);
    expect(codesOf(await gql(t, LIST, {}, { token: readOnly }))).toEqual([]);
  });

  it("answers 401 with an UNAUTHENTICATED GraphQL body without a valid token", async () => {
    for (const token of [null, "not-a-jwt"]) {
      const res = await gql(t, LIST, {}, { token });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect(codesOf(res)).toEqual(["UNAUTHENTICATED"]);
    }
  });

  it("masks unexpected errors (here a table gone from under the service)", async () => {
    await t.app.db.pool.query("ALTER TABLE applications RENAME TO applications_away");
    try {
      const res = await gql(t, GET, { id: "0190d6a4-6a2e-7000-8000-000000000000" });
      expect(res.body.errors).toHaveLength(1);
      expect(res.body.errors[0].message).toBe("Unexpected error.");
      expect(JSON.stringify(res.body)).not.toMatch(/prisma|postgres|applications_away|relation|stack/i);
    } finally {
      await t.app.db.pool.query("ALTER TABLE applications_away RENAME TO applications");
    }
  });

  it("logs what it masks with the request id, and shows no cause even in development mode", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logged = await startTestApp({}, { log: pino({ level: "error" }, sink) });
    const nodeEnv = process.env.NODE_ENV;
    process.env.NODE_ENV = "development"; // what Yoga's default masking reads to decide to leak
    await logged.app.db.pool.query("ALTER TABLE applications RENAME TO applications_away");
    try {
      const res = await gql(
        logged,
        GET,
        { id: "0190d6a4-6a2e-7000-8000-000000000000" },
        { headers: { "X-Request-Id": "masked-req-1" } },
      );
      expect(res.body.errors).toHaveLength(1);
      expect(res.body.errors[0].message).toBe("Unexpected error.");
      expect(res.body.errors[0].extensions?.originalError).toBeUndefined();
      expect(JSON.stringify(res.body)).not.toMatch(/prisma|postgres|applications_away|relation|stack/i);

      const entries = lines.map(
        (l) => JSON.parse(l) as { requestId?: string; err?: { message?: string; stack?: string } },
      );
      const entry = entries.find((e) => e.requestId === "masked-req-1" && e.err);
      expect(entry?.err?.message).toMatch(/applications/);
      expect(entry?.err?.stack).toBeDefined();
    } finally {
      process.env.NODE_ENV = nodeEnv;
      await logged.app.db.pool.query("ALTER TABLE applications_away RENAME TO applications");
      await logged.close();
    }
  });
});

describe("GraphQL application pagination and filters", () => {
  let t2: TestApp;
  beforeAll(async () => {
    t2 = await startTestApp();
    for (let i = 0; i < 7; i++) {
      await t2.request("POST", "/applications", {
        body: {
          name: `p${i}`,
          owner: i % 2 ? "odd" : "even",
          criticality: i < 3 ? "high" : "low",
          tags: i % 3 ? ["x"] : ["x", "y"],
        },
      });
    }
  });
  afterAll(() => t2.close());

  it("walks pages with first/after, newest first, with totalCount, agreeing with REST", async () => {
    const names: string[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const res = await gql(t2, LIST, { first: 3, after });
      const conn = res.body.data.applications;
      expect(conn.totalCount).toBe(7);
      names.push(...conn.edges.map((e: { node: { name: string } }) => e.node.name));
      if (!conn.pageInfo.hasNextPage) break;
      after = conn.pageInfo.endCursor;
    }
    expect(names).toEqual(["p6", "p5", "p4", "p3", "p2", "p1", "p0"]);
    const rest = await t2.request("GET", "/applications?limit=500");
    expect(rest.body.map((a: { name: string }) => a.name)).toEqual(names);
  });

  it("filters like REST", async () => {
    const res = await gql(t2, LIST, { filter: { owner: "even", criticality: "LOW", tags: ["y"] } });
    const rest = await t2.request("GET", "/applications?owner=even&criticality=low&tag=y");
    const gqlNames = res.body.data.applications.edges.map((e: { node: { name: string } }) => e.node.name);
    expect(gqlNames).toEqual(rest.body.map((a: { name: string }) => a.name));
    expect(gqlNames).toEqual(["p6"]);
    expect(res.body.data.applications.totalCount).toBe(1);
  });

  it.each([[0], [501], [-1]])("rejects first=%p like REST's limit", async (first) => {
    const res = await gql(t2, LIST, { first });
    expect(codesOf(res)).toEqual(["BAD_USER_INPUT"]);
    expect(res.body.errors[0].extensions.errors[0].path).toBe("first");
  });

  it("accepts first=500, rejects a forged cursor and has no backward paging", async () => {
    expect(res(await gql(t2, LIST, { first: 500 })).edges).toHaveLength(7);
    const bad = await gql(t2, LIST, { after: "bm90LWEtY3Vyc29y" });
    expect(codesOf(bad)).toEqual(["BAD_USER_INPUT"]);
    expect(bad.body.errors[0].extensions.errors[0].path).toBe("after");
    // Forward paging only, as in REST: `last`/`before` are not arguments at all.
    const backward = await gql(t2, `{ applications(last: 2) { totalCount } }`);
    expect(codesOf(backward)).toEqual(["GRAPHQL_VALIDATION_FAILED"]);
  });
});

const res = (r: { body: { data: { applications: { edges: unknown[] } } } }) => r.body.data.applications;
