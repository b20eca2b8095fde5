// Input no field may hold is refused with a 400 naming where it is, before anything recursive runs:
// nesting deeper than 64 levels, and strings or keys that are not text (a lone UTF-16 surrogate,
// U+0000), in REST bodies and GraphQL variables. Valid JSON all of it, so only the service can refuse
// it. And a malformed Host header.
import http from "node:http";
import { codesOf, wsClient } from "../helpers/graphql.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
let policyId: string;
let webhookId: string;
beforeAll(async () => {
  t = await startTestApp();
  policyId = (await t.request("POST", "/policies", { body: { name: "hostile-policy", action: "block" } })).body.id;
  webhookId = (
    await t.request("POST", "/webhooks", {
      body: { name: "hostile-hook", url: "https://hooks.example.com/h", events: ["scan.completed"], secret: "s" },
    })
  ).body.id;
});
afterAll(() => t.close());

const JSON_TYPE = { "content-type": "application/json" };
const send = (method: string, path: string, rawBody: string) =>
  t.request(method, path, { rawBody, headers: JSON_TYPE });

/** `{"<field>":{"a":{"a":…}}}`, `depth` levels below the field, as raw JSON text. */
const nestedIn = (field: string, depth: number) => `{"${field}":${'{"a":'.repeat(depth)}1${"}".repeat(depth)}}`;

describe("deeply nested JSON", () => {
  it.each([
    ["POST", "/applications", "name"],
    ["POST", "/policies", "name"],
    ["PUT", "/policies/{id}", "conditions"],
    ["PUT", "/webhooks/{id}", "name"],
  ] as const)("%s %s answers 400 at the 64th level", async (method, template, field) => {
    const path = template.replace("{id}", template.startsWith("/policies") ? policyId : webhookId);
    const started = Date.now();
    const res = await send(method, path, nestedIn(field, 10_000));
    expect(Date.now() - started).toBeLessThan(5000);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    const [error] = res.body.errors;
    expect(error.message).toBe("Must not be nested deeper than 64 levels");
    expect(error.path).toBe([field, ...Array(63).fill("a")].join("."));
  });

  it("is refused from the 64th level on, and shallower input reaches the ordinary validation", async () => {
    const shallow = await send("POST", "/applications", nestedIn("name", 62));
    expect(shallow.status).toBe(400);
    expect(shallow.body.errors[0].path).toBe("name"); // not a string: the schema's own answer
    const deep = await send("POST", "/applications", nestedIn("name", 64));
    expect(deep.body.errors[0].message).toBe("Must not be nested deeper than 64 levels");
  });
});

describe("strings that are not text", () => {
  it("refuses a lone surrogate in a field with its path", async () => {
    const res = await send(
      "POST",
      "/webhooks",
      '{"name":"lone","url":"https://hooks.example.com/l","events":["scan.completed"],"secret":"x\\udfffy"}',
    );
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { path: "secret", message: "Must be valid Unicode text (it holds a lone UTF-16 surrogate)" },
    ]);
  });

  it("refuses a lone surrogate deep in an array and in a key", async () => {
    const inArray = await send("POST", "/applications", '{"name":"tags","tags":["ok","\\ud800"]}');
    expect(inArray.status).toBe(400);
    expect(inArray.body.errors).toEqual([
      { path: "tags[1]", message: expect.stringContaining("lone UTF-16 surrogate") },
    ]);
    const inKey = await send("POST", "/applications", '{"name":"key","\\udc00":1}');
    expect(inKey.status).toBe(400);
    expect(inKey.body.errors[0].message).toContain("lone UTF-16 surrogate");
  });

  it("accepts a valid surrogate pair (control)", async () => {
    const res = await send("POST", "/applications", '{"name":"emoji \\ud83d\\udca5"}');
    expect(res.status).toBe(201);
    expect(res.body.name).toBe("emoji 💥");
  });
});

describe("GraphQL variables", () => {
  const CREATE = "mutation($input: CreateApplicationInput!) { createApplication(input: $input) { id } }";
  /** A query without variables in the document: unsafe variables are refused even when no argument reads them. */
  const TYPENAME = "query { __typename }";

  it.each([
    [
      "a lone surrogate",
      '{"input":{"name":"x\\ud800"}}',
      "input.name",
      "Must be valid Unicode text (it holds a lone UTF-16 surrogate)",
    ],
    ["a lone surrogate in a key", '{"input":{"name":"x","\\udfff":1}}', "input.\udfff", "lone UTF-16 surrogate"],
    [
      "nesting 10,000 levels deep",
      `{"input":{"name":${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}}}`,
      `input.name${".a".repeat(62)}`,
      "Must not be nested deeper than 64 levels",
    ],
  ])("over HTTP: %s is a 400 with its path", async (_what, variables, path, message) => {
    for (const query of [CREATE, TYPENAME]) {
      const res = await t.request("POST", "/graphql", {
        rawBody: `{"query":${JSON.stringify(query)},"variables":${variables}}`,
        headers: JSON_TYPE,
      });
      expect(res.status).toBe(400);
      expect(codesOf(res)).toEqual(["BAD_USER_INPUT"]);
      expect(res.body.errors[0].extensions.errors).toEqual([{ path, message: expect.stringContaining(message) }]);
    }
    expect((await t.request("GET", "/applications?limit=100")).body.map((a: { name: string }) => a.name)).not.toContain(
      "x",
    );
  });

  it("in a GET query string: a lone surrogate is a 400, variables that are not JSON too", async () => {
    const surrogate = await t.request(
      "GET",
      `/graphql?query=${encodeURIComponent(TYPENAME)}&variables=${encodeURIComponent('{"a":"\\udfff"}')}`,
    );
    expect(surrogate.status).toBe(400);
    expect(surrogate.body.errors[0].extensions.errors).toEqual([
      { path: "a", message: expect.stringContaining("lone UTF-16 surrogate") },
    ]);
    const notJson = await t.request("GET", `/graphql?query=${encodeURIComponent(TYPENAME)}&variables=%7B`);
    expect(notJson.status).toBe(400);
    expect(notJson.body.errors[0].message).toMatch(/could not be parsed/);
  });

  it("over graphql-ws: a lone surrogate ends that operation with an error, not the socket", async () => {
    const client = wsClient(t, { authorization: `Bearer ${await t.token()}` });
    try {
      const errors = await new Promise<readonly { message: string }[]>((resolve, reject) => {
        client.subscribe(
          { query: "subscription($app: ID) { events(applicationId: $app) { eventId } }", variables: { app: "\udfff" } },
          {
            next: (result) => (result.errors ? resolve(result.errors) : reject(new Error("an event arrived"))),
            error: (err) => (Array.isArray(err) ? resolve(err) : reject(err)),
            complete: () => reject(new Error("completed without an error")),
          },
        );
      });
      expect(errors[0]!.message).toMatch(/Variables are invalid at 'app'.*lone UTF-16 surrogate/);
      const alive = await new Promise((resolve, reject) =>
        client.subscribe({ query: "{ __typename }" }, { next: resolve, error: reject, complete: () => {} }),
      );
      expect(alive).toEqual({ data: { __typename: "Query" } });
    } finally {
      await client.dispose();
    }
  });
});

describe("a malformed Host header", () => {
  /** node:http, because fetch will not send a Host header of the caller's choosing. */
  function withHost(method: string, path: string, host: string): Promise<{ status: number; type: string; body: any }> {
    const { port } = new URL(t.baseUrl);
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: "127.0.0.1", port, method, path, headers: { Host: host, "content-type": "application/json" } },
        (res) => {
          let text = "";
          res.on("data", (chunk) => (text += chunk));
          res.on("end", () =>
            resolve({ status: res.statusCode!, type: String(res.headers["content-type"]), body: JSON.parse(text) }),
          );
        },
      );
      req.on("error", reject);
      req.end(method === "POST" ? '{"query":"{ __typename }"}' : undefined);
    });
  }

  it.each([
    ["POST", "/graphql", "%00"],
    ["POST", "/graphql", "a b"],
    ["GET", "/applications", "%00"],
    ["GET", "/applications?limit=1", "host/with/path"],
    ["GET", "/healthz", "user@host"],
  ])("%s %s with Host %p answers 400", async (method, path, host) => {
    const res = await withHost(method, path, host);
    expect(res.status).toBe(400);
    expect(res.type).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ code: "validation_failed", errors: [{ path: "Host" }] });
  });

  it("lets well-formed ones through (control)", async () => {
    for (const host of ["localhost", "127.0.0.1:8080", "[::1]:8080", "api.example.com"]) {
      expect({ host, status: (await withHost("GET", "/healthz", host)).status }).toEqual({ host, status: 200 });
    }
  });
});
