// Hostile requests for every operation of the live /openapi.json: ids, query strings and bodies
// shaped by each operation's own schema, then bent (wrong types, nasty strings, deep nesting, broken
// JSON and UTF-8), with odd methods, content types and duplicated headers.
import fc from "fast-check";
import { brokenReport } from "./broken-reports.ts";
import { withDescription, type HttpFuzzRequest } from "./fuzz-request.ts";
import { authorization, contentType, extraHeaders, hostileUrlPart, urlPart, type Credentials } from "./http-parts.ts";
import {
  brokenCursor,
  deepJson,
  hostileId,
  hostileJson,
  hostileLimit,
  hostileString,
  NUMBER_LITERALS,
} from "./hostile-values.ts";
import { JsonObject, jsonText, RawJson, wtf8, type JsonValue } from "./json-text.ts";

type Schema = Record<string, any>;

export interface RestOperation {
  method: string;
  /** OpenAPI template, e.g. /applications/{id}/scans/{scanId}. */
  path: string;
  queryParameters: { name: string; schema: Schema }[];
  bodySchema?: Schema;
}

export interface RestFixtures {
  credentials: Credentials;
  /** Real ids by the path's first segment (for `{id}`) or by parameter name (`scanId`, …). */
  ids: Record<string, string>;
  /** Cursors the service issued, for near-miss cursors. */
  cursors: readonly string[];
}

export function restOperations(doc: any): RestOperation[] {
  const resolve = (schema: Schema | undefined): Schema | undefined =>
    schema?.$ref ? doc.components.schemas[String(schema.$ref).split("/").pop()!] : schema;
  return Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      queryParameters: (op.parameters ?? [])
        .filter((p: any) => p.in === "query")
        .map((p: any) => ({ name: p.name, schema: resolve(p.schema) ?? {} })),
      bodySchema: op.requestBody
        ? (resolve((Object.values(op.requestBody.content ?? {})[0] as any)?.schema) ?? {})
        : undefined,
    })),
  );
}

/** A value the schema describes, sometimes right, often just wrong enough. */
function fromSchema(schema: Schema | undefined, depth = 0): fc.Arbitrary<JsonValue> {
  const shaped = shapedBy(schema ?? {}, depth);
  return fc.oneof({ weight: 3, arbitrary: shaped }, { weight: 1, arbitrary: hostileJson });
}

function shapedBy(schema: Schema, depth: number): fc.Arbitrary<JsonValue> {
  if (schema.enum) return fc.constantFrom(...(schema.enum as JsonValue[]));
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...(alternatives as Schema[]).map((s) => shapedBy(s, depth)));
  const type = Array.isArray(schema.type) ? schema.type : [schema.type];
  return fc.oneof(
    ...type.map((t: string | undefined): fc.Arbitrary<JsonValue> => {
      switch (t) {
        case "string":
          return schema.format === "uri" || schema.format === "url"
            ? fc.constantFrom(
                "https://hooks.example.com/h",
                "http://example.com",
                "https://[::1]/x",
                "https://10.0.0.1/",
                "javascript:alert(1)",
                "https://a",
              )
            : fc.oneof(fc.string({ minLength: 1, maxLength: 20 }), hostileString);
        case "integer":
        case "number":
          return fc.oneof(
            fc.integer({ min: -5, max: 600 }),
            fc.constantFrom(...NUMBER_LITERALS).map((n) => new RawJson(n)),
          );
        case "boolean":
          return fc.boolean();
        case "null":
          return fc.constant(null);
        case "array":
          return depth > 4 ? fc.constant([]) : fc.array(fromSchema(schema.items, depth + 1), { maxLength: 4 });
        case "object": {
          if (depth > 4) return fc.constant(new JsonObject([]));
          const properties = Object.entries((schema.properties ?? {}) as Record<string, Schema>);
          const present = properties.map(([name, s]) =>
            fc.option(
              fromSchema(s, depth + 1).map((v) => [name, v] as const),
              { freq: 3, nil: undefined },
            ),
          );
          const unknown = fc.option(
            fc.tuple(
              fc.oneof(hostileString, fc.constantFrom("__proto__", "constructor", "id", "createdAt")),
              hostileJson,
            ),
            { freq: 4, nil: undefined },
          );
          return fc
            .tuple(fc.tuple(...present), unknown)
            .map(([entries, extra]) => new JsonObject([...entries, extra].filter((e) => e !== undefined)));
        }
        default:
          return hostileJson;
      }
    }),
  );
}

const MALFORMED_BODIES = [
  "",
  "{",
  "}",
  "[",
  "null",
  "true",
  "1",
  '"text"',
  "[]",
  "{}",
  '{"a":}',
  "{'a':1}",
  "\u0000",
  "\uFEFF{}",
  '{"name":"x",}',
  '{"a":1}{"b":2}',
  '{"a":NaN}',
  '{"a":Infinity}',
  '{"a":01}',
  '{"a":.5}',
  '{"a":"\\x41"}',
  '{"a":"\\ud800"}',
  '{"\\udfff":1}',
  "/* c */{}",
  '{"a":1 // c\n}',
];

/**
 * Operations whose body is a scanner's report (docs/spec/CONTRACT.md §11): they also get broken reports of every
 * format.
 */
const takesReport = (op: RestOperation) => /\/(scan-reports|report)$/.test(op.path);

/**
 * The body: shaped by the schema, or any hostile JSON, or not JSON at all, or not UTF-8; for a
 * report's operation, often a structurally broken report (broken-reports.ts).
 */
function bodyFor(schema: Schema | undefined, reports = false): fc.Arbitrary<Buffer> {
  const json = fc.oneof({ weight: 4, arbitrary: fromSchema(schema) }, { weight: 1, arbitrary: hostileJson });
  return fc.oneof(
    ...(reports
      ? [{ weight: 6, arbitrary: brokenReport().map((r) => Buffer.from(JSON.stringify(r.document), "utf8")) }]
      : []),
    { weight: 6, arbitrary: json.map((v) => Buffer.from(jsonText(v, "escaped"), "utf8")) },
    { weight: 2, arbitrary: json.map((v) => wtf8(jsonText(v, "raw-bytes"))) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom("name", "tags", "conditions", "events", "url"), deepJson)
        .map(([field, deep]) => Buffer.from(`{"${field}":${deep.text}}`)),
    },
    { weight: 1, arbitrary: fc.constantFrom(...MALFORMED_BODIES).map((text) => Buffer.from(text, "utf8")) },
    {
      weight: 1,
      arbitrary: fc.tuple(json, fc.nat()).map(([v, n]) => {
        const text = jsonText(v);
        return Buffer.from(text.slice(0, n % (text.length + 1)));
      }),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(json, fc.uint8Array({ minLength: 1, maxLength: 8 }), fc.nat()).map(([v, bytes, n]) => {
        const text = Buffer.from(jsonText(v));
        const at = n % (text.length + 1);
        return Buffer.concat([text.subarray(0, at), Buffer.from(bytes), text.subarray(at)]);
      }),
    },
  );
}

function queryValue(param: { name: string; schema: Schema }, cursors: readonly string[]): fc.Arbitrary<string> {
  if (param.name === "limit") return urlPart(fc.oneof(fc.integer({ min: 1, max: 500 }).map(String), hostileLimit));
  if (param.name === "cursor") return urlPart(brokenCursor(cursors));
  const values: fc.Arbitrary<string>[] = [hostileString, fc.string({ maxLength: 12 })];
  if (param.schema.enum) values.push(fc.constantFrom(...(param.schema.enum as string[])));
  return urlPart(fc.oneof(...values));
}

const EXTRA_QUERY_NAMES = [
  "__proto__",
  "constructor[prototype][x]",
  "a[]",
  "limit[]",
  "cursor[0]",
  "%00",
  "",
  "=",
  "query",
  "filter",
];

function queryString(op: RestOperation, cursors: readonly string[]): fc.Arbitrary<string> {
  const declared = op.queryParameters.map((p) =>
    fc.tuple(fc.constant(encodeURIComponent(p.name)), queryValue(p, cursors)),
  );
  const pair = declared.length
    ? fc.oneof(
        { weight: 4, arbitrary: fc.oneof(...declared) },
        { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...EXTRA_QUERY_NAMES), hostileUrlPart) },
      )
    : fc.tuple(fc.constantFrom(...EXTRA_QUERY_NAMES), hostileUrlPart);
  return fc.oneof(
    fc.constant(""),
    fc
      .tuple(fc.array(pair, { minLength: 1, maxLength: 4 }), fc.constantFrom("&", "&&", ";"))
      .map(([pairs, separator]) => `?${pairs.map(([k, v]) => `${k}=${v}`).join(separator)}`),
    fc.constantFrom("?", "?&", "?=", "?limit", "?limit=1&limit=2", "?cursor=&cursor=", "?%", "?" + "a=1&".repeat(500)),
  );
}

// DELETE gets no real id: deleting the fixtures would turn the rest of the run into 404s.
function pathFor(op: RestOperation, ids: Record<string, string>): fc.Arbitrary<string> {
  const segment = op.path.split("/")[1] ?? "";
  const parts = op.path.split(/(\{\w+\})/).map((part): fc.Arbitrary<string> => {
    const param = /^\{(\w+)\}$/.exec(part)?.[1];
    if (!param) return fc.constant(part);
    const real = ids[param === "id" ? segment : param];
    return real && op.method !== "DELETE"
      ? fc.oneof({ weight: 5, arbitrary: fc.constant(real) }, { weight: 2, arbitrary: urlPart(hostileId) })
      : urlPart(hostileId);
  });
  const suffix = fc.oneof(
    { weight: 12, arbitrary: fc.constant("") },
    { weight: 1, arbitrary: fc.constantFrom("/", "//", "/.", "/..", "/%2e%2e", ";x=1", "%00", "/x") },
  );
  return fc.tuple(fc.tuple(...parts), suffix).map(([pieces, end]) => pieces.join("") + end);
}

const ODD_METHODS = [
  "PATCH",
  "OPTIONS",
  "HEAD",
  "PROPFIND",
  "PROPPATCH",
  "MKCOL",
  "COPY",
  "MOVE",
  "LOCK",
  "UNLOCK",
  "SEARCH",
  "PURGE",
  "REPORT",
  "MERGE",
];

function requestFor(op: RestOperation, fixtures: RestFixtures): fc.Arbitrary<HttpFuzzRequest> {
  const method = fc.oneof(
    { weight: 10, arbitrary: fc.constant(op.method) },
    { weight: 1, arbitrary: fc.constantFrom(...ODD_METHODS, "GET", "POST", "PUT", "DELETE") },
  );
  return fc
    .record({
      method,
      path: pathFor(op, fixtures.ids),
      query: queryString(op, fixtures.cursors),
      auth: authorization(fixtures.credentials),
      extra: extraHeaders,
      type: contentType,
      // Bodies where the operation takes one, and now and then where it does not.
      body: fc.option(bodyFor(op.bodySchema, takesReport(op)), { freq: op.bodySchema ? 8 : 1, nil: undefined }),
    })
    .map(({ method, path, query, auth, extra, type, body }) => {
      const sendsBody = body !== undefined && method !== "HEAD";
      const headers: [string, string][] = [
        ...auth,
        ...(sendsBody ? [["content-type", type] as [string, string]] : []),
        ...extra,
      ];
      return withDescription({
        kind: "rest" as const,
        method,
        path: path + query,
        headers,
        body: sendsBody ? body : undefined,
      });
    });
}

export function restRequests(doc: any, fixtures: RestFixtures): fc.Arbitrary<HttpFuzzRequest> {
  return fc.oneof(...restOperations(doc).map((op) => requestFor(op, fixtures)));
}
