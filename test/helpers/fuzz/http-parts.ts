// Pieces every HTTP request generator shares: who calls (tokens good and bad), extra and duplicated
// headers, content types, and strings that may sit in a URL.
import fc from "fast-check";
import { percentEncode } from "./json-text.ts";
import { hostileString, NASTY_STRINGS } from "./hostile-values.ts";

export interface Credentials {
  /** Tokens that verify (admin, read-only, no scope). */
  valid: readonly string[];
  /** Well-formed JWTs that must not verify (expired, alg none, signed with another key). */
  invalid: readonly string[];
}

/** An Authorization header or none; mostly a valid token, so requests reach the handlers. */
export function authorization(credentials: Credentials): fc.Arbitrary<[string, string][]> {
  const valid = fc.constantFrom(...credentials.valid);
  return fc.oneof(
    { weight: 12, arbitrary: valid.map((t): [string, string][] => [["authorization", `Bearer ${t}`]]) },
    { weight: 1, arbitrary: fc.constant<[string, string][]>([]) },
    {
      weight: 2,
      arbitrary: fc
        .oneof(
          fc.constantFrom(...credentials.invalid).map((t) => `Bearer ${t}`),
          valid.map((t) => `bearer ${t}`),
          valid.map((t) => `Bearer  ${t}`),
          valid.map((t) => `Bearer ${t}x`),
          valid.map((t) => `Bearer ${t.split(".").slice(0, 2).join(".")}.`),
          fc.constantFrom(
            "Bearer",
            "Bearer ",
            "Basic YWRtaW46YWRtaW4=",
            "Bearer a.b.c",
            `Bearer ${"a".repeat(8000)}`,
            "Bearer \u00ff\u00fe.\u0080.x",
          ),
        )
        .map((value): [string, string][] => [["authorization", value]]),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(valid, valid).map(([a, b]): [string, string][] => [
        ["authorization", `Bearer ${a}`],
        ["authorization", `Bearer ${b}`],
      ]),
    },
  );
}

// What an HTTP/1.1 header value may hold on the wire: tab, visible ASCII, space and obs-text.
const HEADER_CHARS = [
  "\t",
  ...Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i)),
  ...Array.from({ length: 0x80 }, (_, i) => String.fromCharCode(0x80 + i)),
];

export const headerValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: fc.constantFrom(...HEADER_CHARS), maxLength: 40 }),
  fc.constantFrom(
    "",
    " ",
    "%00",
    "\u00ed\u00a0\u0080",
    "\u00ff\u00fe",
    "a".repeat(6000),
    "null",
    "-1",
    "1e400",
    "*",
    "*/*;q=-1",
    "gzip;q=2, br;q=NaN",
  ),
);

// Not Host: undici refuses or trips over odd ones (two, an unclosed "["); raw requests send those.
const EXTRA_HEADER_NAMES = [
  "x-request-id",
  "x-forwarded-for",
  "x-forwarded-proto",
  "x-forwarded-host",
  "forwarded",
  "accept",
  "accept-encoding",
  "accept-language",
  "if-none-match",
  "if-modified-since",
  "range",
  "origin",
  "cookie",
  "content-encoding",
  "idempotency-key",
  "x-http-method-override",
  "user-agent",
  "referer",
  "content-type",
  "x-webhook-signature",
  "access-control-request-method",
];

/** A few extra headers, some repeated, with values from anywhere a header value may come from. */
export const extraHeaders: fc.Arbitrary<[string, string][]> = fc
  .array(
    fc.tuple(
      fc.oneof(
        { weight: 5, arbitrary: fc.constantFrom(...EXTRA_HEADER_NAMES) },
        { weight: 1, arbitrary: fc.stringMatching(/^[a-z][a-z0-9!#$%&'*+.^_`|~-]{0,20}$/) },
      ),
      headerValue,
    ),
    { maxLength: 4 },
  )
  .chain((headers) => (headers.length ? fc.constantFrom(headers, [...headers, headers[0]!]) : fc.constant(headers)));

export const JSON_CONTENT_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "application/problem+json",
  "application/vnd.api+json",
];

export const contentType: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.constant("application/json") },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      ...JSON_CONTENT_TYPES,
      "application/json; charset=utf-16",
      "application/json; charset=latin1",
      "APPLICATION/JSON",
      "application/json;;",
      "application/json; charset=",
      "application/json, text/plain",
      "text/plain",
      "application/xml",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=",
      "multipart/form-data",
      "application/graphql",
      "*/*",
      "",
      "json",
      "application/",
      "\u00ff/\u00fe",
    ),
  },
);

/** A string as it may appear in a URL: percent-encoded (lone surrogates as WTF-8 bytes), broken escapes, raw bytes. */
export const urlPart = (value: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 6, arbitrary: value.map(percentEncode) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "%",
        "%Z",
        "%ZZ",
        "%E0%A4%A",
        "%ED%A0%80",
        "%ED%BF%BF",
        "%C0%AF",
        "%FF%FE",
        "%00",
        "%2F..%2F",
        "%25",
        "+",
        "%20",
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom("\u00ed\u00a0\u0080", "\u00ff", "\u00c3\u0028", "\u00e2\u0082") },
  );

export const hostileUrlPart = urlPart(fc.oneof(hostileString, fc.constantFrom(...NASTY_STRINGS)));
