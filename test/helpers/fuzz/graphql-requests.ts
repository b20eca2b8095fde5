// Hostile GraphQL over HTTP, derived from the live schema so new root fields are covered: every
// query, mutation and subscription with variables of the right shape bent out of it, malformed and
// oversized documents, broken envelopes (batches, wrong parameter types, broken JSON in a query
// string, form and multipart bodies), under every Accept the service might stream for.
import fc from "fast-check";
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  isRequiredArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
} from "graphql";
import { withDescription, type HttpFuzzRequest } from "./fuzz-request.ts";
import { authorization, extraHeaders, hostileUrlPart, JSON_CONTENT_TYPES, type Credentials } from "./http-parts.ts";
import { brokenCursor, deepJson, hostileId, hostileJson, hostileNumber, hostileString } from "./hostile-values.ts";
import { JsonObject, jsonText, percentEncode, RawJson, wtf8, type JsonValue } from "./json-text.ts";

export interface GraphqlFixtures {
  credentials: Credentials;
  realIds: readonly string[];
  cursors: readonly string[];
}

interface Operation {
  kind: "query" | "mutation" | "subscription";
  document: string;
  variables: { name: string; argName: string; type: GraphQLInputType }[];
}

/** Leaf fields and, two levels down, object fields: enough to reach the resolvers behind a root field. */
function selection(type: GraphQLOutputType, depth = 0): string {
  const named = getNamedType(type);
  if (isLeafType(named)) return "";
  if (!isObjectType(named)) return "{ __typename }";
  const fields = Object.values((named as GraphQLObjectType).getFields()).filter(
    (f) => !f.args.some(isRequiredArgument),
  );
  const leaves = fields.filter((f) => isLeafType(getNamedType(f.type))).map((f) => f.name);
  const objects =
    depth < 2
      ? fields
          .filter((f) => isObjectType(getNamedType(f.type)))
          .slice(0, 4)
          .map((f) => `${f.name} ${selection(f.type, depth + 1)}`)
      : [];
  return `{ __typename ${[...leaves, ...objects].join(" ")} }`;
}

function operationFor(kind: Operation["kind"], field: GraphQLField<unknown, unknown>): Operation {
  const variables = field.args.map((arg) => ({ name: `v_${arg.name}`, argName: arg.name, type: arg.type }));
  const definitions = variables.length
    ? `(${variables.map((v) => `$${v.name}: ${v.type.toString()}`).join(", ")})`
    : "";
  const args = variables.length ? `(${variables.map((v) => `${v.argName}: $${v.name}`).join(", ")})` : "";
  return { kind, variables, document: `${kind} Fuzz${definitions} { ${field.name}${args} ${selection(field.type)} }` };
}

export function graphqlOperations(schema: GraphQLSchema): Operation[] {
  const roots = [
    ["query", schema.getQueryType()],
    ["mutation", schema.getMutationType()],
    ["subscription", schema.getSubscriptionType()],
  ] as const;
  return roots.flatMap(([kind, type]) =>
    type ? Object.values(type.getFields()).map((field) => operationFor(kind, field)) : [],
  );
}

/** A variable's value: of its type, nearly of its type, or anything at all. */
function valueFor(
  type: GraphQLInputType,
  argName: string,
  fixtures: GraphqlFixtures,
  depth = 0,
): fc.Arbitrary<JsonValue> {
  const wrong = fc.oneof(hostileJson, fc.constant(null));
  if (isNonNullType(type)) return valueFor(type.ofType, argName, fixtures, depth);
  let right: fc.Arbitrary<JsonValue>;
  if (isListType(type)) {
    const item = valueFor(type.ofType, argName, fixtures, depth + 1);
    right = depth > 3 ? fc.constant([]) : fc.oneof(fc.array(item, { maxLength: 4 }), item);
  } else if (isEnumType(type)) {
    const names = type.getValues().map((v) => v.name);
    right = fc.oneof(
      fc.constantFrom(...names),
      fc.constantFrom(...names).map((n) => n.toLowerCase()),
    );
  } else if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields()).map((f) =>
      fc.option(
        valueFor(f.type, f.name, fixtures, depth + 1).map((v) => [f.name, v] as const),
        { freq: 3, nil: undefined },
      ),
    );
    const unknown = fc.option(
      fc.tuple(fc.constantFrom("__proto__", "constructor", "id", "unknownField"), hostileJson),
      { freq: 5, nil: undefined },
    );
    right =
      depth > 3
        ? fc.constant(new JsonObject([]))
        : fc
            .tuple(fc.tuple(...fields), unknown)
            .map(([entries, extra]) => new JsonObject([...entries, extra].filter((e) => e !== undefined)));
  } else if (argName === "after") {
    right = brokenCursor(fixtures.cursors);
  } else {
    switch (type.name) {
      case "ID":
        right = fixtures.realIds.length ? fc.oneof(fc.constantFrom(...fixtures.realIds), hostileId) : hostileId;
        break;
      case "Int":
      case "Float":
        right = fc.oneof(fc.integer({ min: -5, max: 600 }), hostileNumber);
        break;
      case "Boolean":
        right = fc.boolean();
        break;
      case "String":
        right = fc.oneof(
          fc.string({ minLength: 1, maxLength: 20 }),
          fc.constantFrom("https://hooks.example.com/h", "scan.completed"),
          hostileString,
        );
        break;
      default:
        right = hostileJson;
    }
  }
  return fc.oneof({ weight: 4, arbitrary: right }, { weight: 1, arbitrary: wrong });
}

function variablesFor(op: Operation, fixtures: GraphqlFixtures): fc.Arbitrary<JsonValue | undefined> {
  const entries = op.variables.map((v) =>
    fc.option(
      valueFor(v.type, v.argName, fixtures).map((value) => [v.name, value] as const),
      { freq: 6, nil: undefined },
    ),
  );
  const shaped = fc.tuple(...entries).map((list) => new JsonObject(list.filter((e) => e !== undefined)));
  return fc.oneof(
    { weight: 8, arbitrary: shaped },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: hostileJson },
    { weight: 1, arbitrary: deepJson.map((deep) => new JsonObject([[op.variables[0]?.name ?? "v", deep]])) },
  );
}

const deepSelection = (levels: number) =>
  "{ applications { edges { node " +
  "{ scans { edges { node { application ".repeat(levels) +
  "{ id }" +
  " } } } }".repeat(levels) +
  " } } }";

const MALFORMED_DOCUMENTS = [
  "",
  " ",
  "{",
  "}",
  "{}",
  "query",
  "query {",
  "{ __typename",
  "mutation { }",
  "subscription",
  "{ __typename }}",
  "{ ...on Query { __typename } }",
  "query A { __typename } query A { __typename }",
  "query A { __typename } query B { __typename }",
  "fragment F on Query { ...F } { ...F }",
  "{ application(id: 1e400) { id } }",
  "{ applications(first: 99999999999999999999) { totalCount } }",
  "{ applications(first: -0) { totalCount } }",
  '{ applications(after: "\\uD800") { totalCount } }',
  '{ applications(after: "\ud800") { totalCount } }',
  '{ applications(after: """\\udfff""") { totalCount } }',
  '{ applications(filter: { owner: "\u0000" }) { totalCount } }',
  "{ __schema { types { fields { type { fields { name } } } } } }",
  `{ __schema { types { ${"ofType { ".repeat(100)}name${" }".repeat(100)} } } }`,
  "{ __type(name: 1) { name } }",
  "query ($a: Int = 1e400) { __typename }",
  `{ ${Array.from({ length: 40 }, (_, i) => `a${i}: __typename`).join(" ")} }`,
  `{ __typename ${"@include(if: true) ".repeat(30)}}`,
  `{ ${"__typename ".repeat(2500)}}`,
  `{ applications(filter: { owner: ${"[".repeat(900)}${"]".repeat(900)} }) { totalCount } }`,
  "\uFEFF{ __typename }",
  "{ __typename } # \ud800",
  "query Fuzz($v: ApplicationFilter) { applications(filter: $v) { totalCount } }",
  "{ applications { totalCount } } extra",
  "{ a: applications b: applications { totalCount } }",
];

function documentFor(ops: Operation[]): fc.Arbitrary<{ document: string; op?: Operation }> {
  const valid = fc.constantFrom(...ops).map((op) => ({ document: op.document, op }));
  const bent = fc
    .tuple(fc.constantFrom(...ops), fc.nat(), fc.string({ unit: "binary", maxLength: 3 }))
    .map(([op, n, junk]) => {
      const at = n % (op.document.length + 1);
      return { document: op.document.slice(0, at) + junk + op.document.slice(at + (n % 3)), op };
    });
  return fc.oneof(
    { weight: 12, arbitrary: valid },
    { weight: 2, arbitrary: bent },
    { weight: 2, arbitrary: fc.constantFrom(...MALFORMED_DOCUMENTS).map((document) => ({ document })) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 120 }).map((levels) => ({ document: deepSelection(levels) })) },
    { weight: 1, arbitrary: hostileString.map((document) => ({ document })) },
  );
}

const ACCEPTS = [
  undefined,
  "application/json",
  "application/graphql-response+json",
  "*/*",
  "application/graphql-response+json, application/json;q=0.9",
  "text/event-stream",
  "multipart/mixed",
  "text/html",
  "application/xml",
  "application/json;q=0",
  "*/*;q=-1",
  "\u00ff",
];
/** Streaming answers (SSE, multipart) to a subscription stay open by design: ask for JSON there. */
const acceptFor = (document: string) =>
  document.includes("subscription")
    ? fc.constantFrom("application/json", "application/graphql-response+json")
    : fc.constantFrom(...ACCEPTS);

type Envelope = { method: string; query: string; contentType?: string; body?: Buffer };

function envelopeFor(
  document: string,
  variables: JsonValue | undefined,
  operationName: string | undefined,
): fc.Arbitrary<Envelope> {
  const params = (extra: [string, JsonValue][] = []) =>
    new JsonObject([
      ["query", document],
      ...(variables === undefined ? [] : [["variables", variables] as [string, JsonValue]]),
      ...(operationName === undefined ? [] : [["operationName", operationName] as [string, JsonValue]]),
      ...extra,
    ]);
  const json = (value: JsonValue, form: "escaped" | "raw-bytes") =>
    form === "escaped" ? Buffer.from(jsonText(value, form)) : wtf8(jsonText(value, form));
  const variablesText = variables === undefined ? undefined : jsonText(variables);
  const searchParams = (junk: string | undefined) =>
    [
      `query=${percentEncode(document)}`,
      ...(variablesText === undefined ? [] : [`variables=${junk ?? percentEncode(variablesText)}`]),
      ...(operationName === undefined ? [] : [`operationName=${percentEncode(operationName)}`]),
    ].join("&");
  const brokenJson = fc.oneof(
    fc.constantFrom("%7B", "notjson", "%ED%A0%80", "[1,", "%22%5Cud800%22", "1e400", "null", "[]", '"x"'),
    hostileUrlPart,
  );
  return fc.oneof(
    {
      weight: 10,
      arbitrary: fc
        .tuple(
          fc.constantFrom("escaped" as const, "raw-bytes" as const),
          fc.constantFrom(...JSON_CONTENT_TYPES, "application/graphql+json"),
        )
        .map(([form, type]) => ({ method: "POST", query: "", contentType: type, body: json(params(), form) })),
    },
    {
      weight: 3,
      arbitrary: fc
        .option(brokenJson, { freq: 3, nil: undefined })
        .map((junk) => ({ method: "GET", query: `?${searchParams(junk)}` })),
    },
    {
      weight: 1,
      arbitrary: brokenJson.map((junk) => ({
        method: "GET",
        query: `?query=${percentEncode(document)}&extensions=${junk}`,
      })),
    },
    {
      weight: 1,
      arbitrary: fc.option(brokenJson, { freq: 2, nil: undefined }).map((junk) => ({
        method: "POST",
        query: "",
        contentType: "application/x-www-form-urlencoded",
        body: Buffer.from(searchParams(junk), "latin1"),
      })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom("{", jsonText(params()), "[]", "null").map((operations) => ({
        method: "POST",
        query: "",
        contentType: "multipart/form-data; boundary=fuzz",
        body: Buffer.from(
          `--fuzz\r\nContent-Disposition: form-data; name="operations"\r\n\r\n${operations}\r\n--fuzz\r\nContent-Disposition: form-data; name="map"\r\n\r\n{"0":["variables.file"]}\r\n--fuzz--\r\n`,
        ),
      })),
    },
    {
      weight: 1,
      arbitrary: fc.constant({ method: "POST", query: "", contentType: "application/graphql", body: wtf8(document) }),
    },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 0, max: 3 }).map((n) => ({
        method: "POST",
        query: "",
        contentType: "application/json",
        body: Buffer.from(jsonText(Array(n).fill(params()))),
      })),
    },
    {
      weight: 2,
      arbitrary: fc
        .oneof(
          hostileJson,
          fc
            .tuple(
              fc.constantFrom("query", "variables", "operationName", "extensions", "__proto__", "unknown"),
              hostileJson,
            )
            .map(([key, value]) => params([[key, value]])),
          fc
            .constantFrom("{", '{"query":', "", '{"query":"{ __typename }"}{', '{"query":"{ __typename }","query":1}')
            .map((text) => new RawJson(text)),
        )
        .map((body) => ({
          method: "POST",
          query: "",
          contentType: "application/json",
          body: Buffer.from(jsonText(body)),
        })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom("PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "PROPFIND")
        .map((method) => ({ method, query: `?${searchParams(undefined)}` })),
    },
  );
}

export function graphqlRequests(schema: GraphQLSchema, fixtures: GraphqlFixtures): fc.Arbitrary<HttpFuzzRequest> {
  const ops = graphqlOperations(schema);
  return documentFor(ops)
    .chain(({ document, op }) =>
      fc.record({
        document: fc.constant(document),
        variables: op ? variablesFor(op, fixtures) : fc.option(hostileJson, { nil: undefined }),
        operationName: fc.option(fc.oneof(fc.constantFrom("Fuzz", "Other", ""), hostileString), {
          freq: 4,
          nil: undefined,
        }),
        accept: acceptFor(document),
        auth: authorization(fixtures.credentials),
        extra: extraHeaders,
      }),
    )
    .chain(({ document, variables, operationName, accept, auth, extra }) =>
      envelopeFor(document, variables, operationName).map((envelope) => {
        const headers: [string, string][] = [
          ...auth,
          ...(accept === undefined ? [] : [["accept", accept] as [string, string]]),
        ];
        if (envelope.contentType) headers.push(["content-type", envelope.contentType]);
        // Extra headers, but never a second Accept or Content-Type: they would undo the choices above.
        headers.push(...extra.filter(([name]) => name !== "accept" && name !== "content-type"));
        return withDescription({
          kind: "graphql" as const,
          method: envelope.method,
          path: `/graphql${envelope.query}`,
          headers,
          body: envelope.method === "HEAD" ? undefined : envelope.body,
        });
      }),
    );
}
