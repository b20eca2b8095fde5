// Limits, GraphiQL and the committed schema file.
import { readFileSync } from "node:fs";
import { getIntrospectionQuery } from "graphql";
import { printedSchema, SCHEMA_FILE } from "../../src/graphql/print-schema.ts";
import { GRAPHQL_LIMITS } from "../../src/graphql/limits.ts";
import { codesOf, gql } from "../helpers/graphql.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

describe("schema.graphql", () => {
  it("is the printed schema (run `npm run schema:print` when this fails)", () => {
    expect(readFileSync(SCHEMA_FILE, "utf8")).toBe(printedSchema());
  });
});

describe("GraphQL limits and GraphiQL", () => {
  let t: TestApp;
  let prod: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
    prod = await startTestApp({ NODE_ENV: "production" });
  });
  afterAll(async () => {
    await t.close();
    await prod.close();
  });

  const rejected = async (app: TestApp, query: string, pattern: RegExp) => {
    const res = await gql(app, query);
    expect(res.body.data ?? undefined).toBeUndefined();
    const messages = res.body.errors.map((e: { message: string }) => e.message).join(" ");
    expect(messages).toMatch(pattern);
    expect(messages).not.toMatch(/syntax error/i); // a limit, named as such
  };

  it("rejects queries deeper than the limit and accepts one at the limit", async () => {
    // Application → vulnerabilities → edges → node → application → … adds 4 levels per turn.
    const nest = (turns: number) => {
      let selection = "id";
      for (let i = 0; i < turns; i++)
        selection = `id vulnerabilities(first: 1) { edges { node { application { ${selection} } } } }`;
      return `{ applications(first: 1) { edges { node { ${selection} } } } }`;
    };
    expect(codesOf(await gql(t, nest(1)))).toEqual([]);
    await rejected(t, nest(3), /depth/i);
  });

  it("exempts introspection from the depth and cost limits, so GraphQL tools can read the schema", async () => {
    for (const app of [t, prod]) {
      const full = await gql(
        app,
        getIntrospectionQuery({
          descriptions: true,
          specifiedByUrl: true,
          directiveIsRepeatable: true,
          schemaDescription: true,
          inputValueDeprecation: true,
          oneOf: true,
        }),
      );
      expect(codesOf(full)).toEqual([]);
      expect(full.body.data.__schema.types.map((type: { name: string }) => type.name)).toContain("Application");
      const typeRefs = "name kind ofType { name kind ofType { name kind ofType { name kind ofType { name kind } } } }";
      const deep = await gql(
        app,
        `{ __type(name: "Application") { name fields { name type { ${typeRefs} } args { type { ${typeRefs} } } } } }`,
      );
      expect(codesOf(deep)).toEqual([]);
      expect(deep.body.data.__type.fields.length).toBeGreaterThan(3);
    }
  });

  it("still limits the depth of a query that asks for data beside introspection", async () => {
    const typeRefs =
      "ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } }";
    await rejected(
      t,
      `{ applications(first: 1) { totalCount } __type(name: "Application") { fields { type { ${typeRefs} } } } }`,
      /depth limit of 10/i,
    );
  });

  it("rejects too many aliases", async () => {
    const aliases = Array.from(
      { length: GRAPHQL_LIMITS.maxAliases + 1 },
      (_, i) => `a${i}: applications { totalCount }`,
    ).join(" ");
    await rejected(t, `{ ${aliases} }`, /alias/i);
    const ok = Array.from({ length: GRAPHQL_LIMITS.maxAliases }, (_, i) => `a${i}: applications { totalCount }`).join(
      " ",
    );
    expect(codesOf(await gql(t, `{ ${ok} }`))).toEqual([]);
  });

  it("rejects queries over the token limit", async () => {
    const many = Array.from({ length: GRAPHQL_LIMITS.maxTokens }, () => "__typename").join(" ");
    await rejected(t, `{ ${many} }`, /token/i);
  });

  it("rejects queries over the cost limit", async () => {
    const field = `applications(first: 500) { edges { node { id name tags owner description } } }`;
    const aliases = Array.from({ length: GRAPHQL_LIMITS.maxAliases }, (_, i) => `a${i}: ${field}`).join(" ");
    await rejected(t, `{ ${aliases} }`, /cost/i);
  });

  it("answers 413 for a body over 1 MiB, like REST", async () => {
    const res = await gql(t, "{ __typename }", { pad: "x".repeat(1024 * 1024) });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe("payload_too_large");
  });

  it("answers 413 for a chunked body over 1 MiB, which announces no length", async () => {
    const token = await t.token();
    const chunk = new TextEncoder().encode(" ".repeat(64 * 1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"query":"{ __typename }","pad":"'));
        if (sent > 2 * 1024 * 1024) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const res = await fetch(`${t.baseUrl}/graphql`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(res.headers.get("content-length")).not.toBeNull();
    expect(res.status).toBe(413);
    expect(((await res.json()) as { code: string }).code).toBe("payload_too_large");
  });

  it("suggests field names in development only", async () => {
    const dev = await gql(t, `{ applicatons { totalCount } }`);
    expect(JSON.stringify(dev.body)).toMatch(/Did you mean/);
    const production = await gql(prod, `{ applicatons { totalCount } }`);
    expect(production.body.errors).toHaveLength(1);
    expect(JSON.stringify(production.body)).not.toMatch(/Did you mean|applications/);
  });

  it("serves GraphiQL outside production only", async () => {
    const page = (app: TestApp) => fetch(`${app.baseUrl}/graphql`, { headers: { accept: "text/html" } });
    const dev = await page(t);
    expect(dev.status).toBe(200);
    expect(await dev.text()).toMatch(/graphiql/i);
    const production = await page(prod);
    expect(production.status).toBe(401);
  });
});
