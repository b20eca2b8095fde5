// OpenAPI 3.1 document derived from the route definitions (JSON Schema 2020-12 from zod).
import { z } from "zod";
import { SCOPE_DESCRIPTIONS } from "../auth/scopes.ts";
import { API_TAGS } from "./api-tags.ts";
import type { RouteDefinition } from "./route.ts";

// A malformed Host header or a query string that is not text is a 400 on every route (docs/spec/CONTRACT.md §2).
const EVERY_ROUTE_ERRORS = [400];
const STANDARD_ERRORS = [401, 403, 429, 500, 503];

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: "Validation failed or malformed JSON",
  401: "Missing or invalid bearer token",
  403: "The token lacks the required scope",
  404: "Not found",
  405: "Method not allowed",
  409: "Conflict",
  410: "The cursor has expired (older than the events kept)",
  413: "Body over 1 MiB",
  415: "Body is not JSON",
  422: "The report says its tool failed (code tool_failed, errors[].path JSON Pointers into it): no scan was created",
  429: "Rate limit exceeded (see Retry-After)",
  500: "Internal error",
  503: "The database cannot be reached (see Retry-After), or not ready",
};

const HEADER_DESCRIPTIONS: Record<string, string> = {
  Location: "URL of the created resource",
  Link: 'URL of the next page, rel="next", present when more results remain',
};

const problemSchema = {
  type: "object",
  required: ["type", "title", "status", "detail", "code"],
  properties: {
    type: { type: "string" },
    title: { type: "string" },
    status: { type: "integer" },
    detail: { type: "string" },
    code: {
      type: "string",
      enum: [
        "validation_failed",
        "malformed_json",
        "unauthorized",
        "forbidden",
        "not_found",
        "conflict",
        "method_not_allowed",
        "payload_too_large",
        "unsupported_media_type",
        "rate_limited",
        "internal",
        "cursor_expired",
        "unavailable",
        "tool_failed",
      ],
    },
    errors: {
      type: "array",
      items: {
        type: "object",
        required: ["path", "message"],
        properties: { path: { type: "string" }, message: { type: "string" } },
      },
    },
  },
};

type JsonSchema = Record<string, unknown>;

const IGNORED = "Assigned by the service: ignored when sent, so that a GET result can be sent back";
const READ_ONLY_SCHEMAS: Record<string, JsonSchema> = {
  id: { type: "string", format: "uuid", readOnly: true, description: IGNORED },
  createdAt: { type: "string", format: "date-time", readOnly: true, description: IGNORED },
  updatedAt: { type: "string", format: "date-time", readOnly: true, description: IGNORED },
};

/** A request body's object schema with the read-only fields it may carry back declared (OpenAPI readOnly). */
function withReadOnly(schema: JsonSchema, fields: readonly string[] | undefined): JsonSchema {
  if (!fields?.length || typeof schema.properties !== "object") return schema;
  return {
    ...schema,
    properties: {
      ...(schema.properties as JsonSchema),
      ...Object.fromEntries(fields.map((f) => [f, READ_ONLY_SCHEMAS[f]])),
    },
  };
}

/**
 * Drops what zod writes that tells a client nothing: the regex it checks date-times with (beside
 * `format: date-time`, which says it), and ±2^53-1 bounds on every integer; and says what a date
 * is as text (zod cannot represent a Date in JSON Schema). A URL's pattern is
 * ours (absoluteUrlPattern): `format: uri` alone allows any scheme.
 */
function withoutNoise({ zodSchema, jsonSchema: s }: { zodSchema: z.core.$ZodTypes; jsonSchema: JsonSchema }): void {
  // A date a query or body carries is ISO 8601 text (GraphQL's DateTime is the Date itself).
  if (zodSchema._zod.def.type === "date") Object.assign(s, { type: "string", format: "date-time" });
  if (typeof s.format === "string" && s.format !== "uri" && "pattern" in s) delete s.pattern;
  if (s.minimum === Number.MIN_SAFE_INTEGER) delete s.minimum;
  if (s.maximum === Number.MAX_SAFE_INTEGER) delete s.maximum;
}

/** The identity provider's endpoints (OIDC_ISSUER's discovery), when the service trusts one. */
export interface IssuerEndpoints {
  authorization_endpoint?: string;
  token_endpoint?: string;
}

const BEARER_SCHEME = {
  type: "http",
  scheme: "bearer",
  bearerFormat: "JWT",
  description:
    "A JWT whose `scope` (or `scp`) claim grants the operation's scope; `admin` grants all. " +
    "The scopes an operation's security requirement lists are OAuth 2.0 scopes, described in `x-scopes`.",
  "x-scopes": SCOPE_DESCRIPTIONS,
};

/**
 * The schemes a token may come by: always a bearer JWT; with an identity provider, also its OAuth 2.0
 * flows (client credentials for machines, authorization code for people), so that generated clients
 * and gateways know where to get one and which scopes to ask for.
 */
function securitySchemes(issuer: IssuerEndpoints | undefined): Record<string, JsonSchema> {
  const tokenUrl = issuer?.token_endpoint;
  if (!tokenUrl) return { bearerAuth: BEARER_SCHEME };
  const scopes = SCOPE_DESCRIPTIONS;
  return {
    bearerAuth: BEARER_SCHEME,
    oauth2: {
      type: "oauth2",
      description: "Access tokens from the identity provider the service trusts (OIDC_ISSUER, CONTRACT §18).",
      flows: {
        clientCredentials: { tokenUrl, scopes },
        ...(issuer.authorization_endpoint && {
          authorizationCode: { authorizationUrl: issuer.authorization_endpoint, tokenUrl, scopes },
        }),
      },
    },
  };
}

export function buildOpenApi(routes: readonly RouteDefinition[], info: { version: string; issuer?: IssuerEndpoints }) {
  const schemes = securitySchemes(info.issuer);
  const requirement = (scopes: string[]) => Object.keys(schemes).map((scheme) => ({ [scheme]: scopes }));
  const components: Record<string, JsonSchema> = { Problem: problemSchema };
  // Named schemas (zod .meta({ id })) become components; everything else is inlined.
  const toSchema = (schema: z.ZodType, io: "input" | "output"): JsonSchema => {
    const generated = z.toJSONSchema(schema, {
      io,
      target: "draft-2020-12",
      unrepresentable: "any",
      override: withoutNoise,
    });
    const relinked = JSON.parse(JSON.stringify(generated).replaceAll('"#/$defs/', '"#/components/schemas/'));
    const { $defs, $schema: _, ...rest } = relinked as JsonSchema & { $defs?: Record<string, JsonSchema> };
    Object.assign(components, $defs);
    return rest;
  };

  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const pathParams = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    const queryParams = Object.entries(r.query?.shape ?? {}).map(([name, schema]) => ({
      name,
      in: "query",
      required: !(schema as z.ZodType).safeParse(undefined).success,
      description: (schema as z.ZodType).description,
      schema: toSchema(schema as z.ZodType, "input"),
    }));
    const responses: Record<string, unknown> = {
      [r.success.status]: {
        description: r.success.description,
        ...(r.success.headers && {
          headers: Object.fromEntries(
            r.success.headers.map((h) => [h, { description: HEADER_DESCRIPTIONS[h] ?? h, schema: { type: "string" } }]),
          ),
        }),
        ...(r.success.schema && {
          content: Object.fromEntries(
            [r.success.contentType ?? "application/json", ...(r.success.alsoAs ?? [])].map((type) => [
              type,
              { schema: toSchema(r.success.schema!, "output") },
            ]),
          ),
        }),
      },
    };
    if (r.success.orNoContent) responses[204] = { description: r.success.orNoContent };
    const errorStatuses = [
      ...new Set([...r.errors, ...EVERY_ROUTE_ERRORS, ...(r.public ? [] : STANDARD_ERRORS)]),
    ].sort();
    for (const status of errorStatuses) {
      const own = r.errorBodies?.[status];
      responses[status] = {
        description: ERROR_DESCRIPTIONS[status] ?? "Error",
        content: {
          "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } },
          ...(own && { "application/json": { schema: toSchema(own, "output") } }),
        },
      };
    }
    (paths[r.path] ??= {})[r.method.toLowerCase()] = {
      operationId: r.operationId,
      summary: r.summary,
      ...(r.description && { description: r.description }),
      tags: [r.tag],
      // Alternatives are separate requirements: any one of them is enough.
      security: r.public
        ? []
        : r.anyScope
          ? r.anyScope.flatMap((scope) => requirement([scope]))
          : requirement(r.scope ? [r.scope] : []),
      parameters: [...pathParams, ...queryParams],
      ...(r.body && {
        requestBody: {
          required: !r.bodyOptional,
          content: Object.fromEntries(
            (r.bodyMediaTypes ?? ["application/json"]).map((type) => [
              type,
              { schema: withReadOnly(toSchema(r.body!, "input"), r.bodyReadOnly) },
            ]),
          ),
        },
      }),
      responses,
    };
  }

  return {
    openapi: "3.1.0",
    info: {
      title: "Application Security Service API",
      version: info.version,
      description:
        "Application inventory, security scans, vulnerabilities, policies and signed webhook notifications. " +
        "Every error body is RFC 9457 application/problem+json.",
    },
    // Relative: the API is served from the same origin as this document.
    servers: [{ url: "/" }],
    tags: Object.entries(API_TAGS).map(([name, description]) => ({ name, description })),
    components: { securitySchemes: schemes, schemas: components },
    security: requirement([]),
    paths,
  };
}
