// Requests no HTTP client would send, written byte by byte: odd and lowercase methods, CONNECT,
// broken request lines and versions, malformed, duplicated and oversized headers, absurd
// Content-Length, chunked bodies that lie, raw invalid UTF-8 and lone-surrogate bytes anywhere.
//
// Every request ends its head with `Connection: close`, so an answer is complete when the server
// closes. Bodies are never shorter than announced: a server waiting for bytes it was promised is
// right to wait (Node's request timeout ends that), so such requests would prove nothing here.
import fc from "fast-check";
import { withDescription, type RawFuzzRequest } from "./fuzz-request.ts";
import { headerValue, hostileUrlPart, type Credentials } from "./http-parts.ts";
import { wtf8 } from "./json-text.ts";

export interface RawFixtures {
  credentials: Credentials;
  /** Paths of real resources and lists (with real ids), and /graphql with a query. */
  targets: readonly string[];
}

const METHODS = [
  "GET",
  "POST",
  "PUT",
  "DELETE",
  "HEAD",
  "OPTIONS",
  "PATCH",
  "PROPFIND",
  "TRACE",
  "CONNECT",
  "get",
  "Post",
  "FOO",
  "G ET",
  "",
  "GET\u0000",
  "M".repeat(300),
];
const VERSIONS = [
  "HTTP/1.1",
  "HTTP/1.0",
  "HTTP/2.0",
  "HTTP/9.9",
  "HTTP/1.1 extra",
  "http/1.1",
  "HTTP/1",
  "HTTP/1.1\u0000",
  "",
];

/** What is written after the method: a path, an authority (CONNECT), `*`, an absolute URL, bytes. */
function target(fixtures: RawFixtures): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...fixtures.targets) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom(...fixtures.targets), hostileUrlPart)
        .map(([path, junk]) => `${path}${path.includes("?") ? "&" : "?"}x=${junk}`),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom(...fixtures.targets), hostileUrlPart)
        .map(([path, junk]) => `${path.split("?")[0]}/${junk}`),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        "*",
        "/",
        "//",
        "example.com:443",
        "http://evil.example/applications",
        "/applications?limit=1e400",
        "/applications?cursor=%ED%A0%80",
        "/applications/\u00ed\u00a0\u0080",
        "/applications?owner=\u00ff\u00fe",
        "/%",
        "/applications/../healthz",
        "/graphql?query=%7B__typename%7D&variables=%7B",
        "/graphql?query=%7B__typename%7D&variables=%7B%22a%22%3A%22%5Cud800%22%7D",
        "/a b",
        "/\u0000",
        `/${"a".repeat(9000)}`,
        "",
      ),
    },
  );
}

const header = (name: string, value: string) => `${name}: ${value}\r\n`;

/** The head's headers (Connection: close is added after them). */
function headers(credentials: Credentials): fc.Arbitrary<string> {
  const token = fc.constantFrom(...credentials.valid);
  const host = fc.oneof(
    { weight: 6, arbitrary: fc.constant(header("Host", "localhost")) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "",
        header("Host", "a") + header("Host", "b"),
        header("Host", "a b"),
        header("Host", "%00"),
        header("Host", "user@h"),
        header("Host", "[::1"),
        header("Host", ""),
      ),
    },
    { weight: 1, arbitrary: headerValue.map((v) => header("Host", v)) },
  );
  const auth = fc.oneof(
    { weight: 6, arbitrary: token.map((t) => header("Authorization", `Bearer ${t}`)) },
    { weight: 1, arbitrary: fc.constant("") },
    { weight: 1, arbitrary: token.map((t) => header("Authorization", `Bearer ${t}`).repeat(2)) },
    { weight: 1, arbitrary: headerValue.map((v) => header("Authorization", `Bearer ${v}`)) },
  );
  const odd = fc.constantFrom(
    "",
    "",
    "",
    header("X-A", "a") + " folded\r\n",
    "Host : x\r\n",
    "NoColon\r\n",
    ": empty-name\r\n",
    "X(A): 1\r\n",
    header("X-A", "a\u0000b"),
    header("X-A", "\u00ed\u00a0\u0080\u00ff"),
    header("X-Big", "a".repeat(20_000)),
    header("X-Many", "1").repeat(300),
    "X-A: 1\n",
    header("Expect", "100-continue"),
    header("Expect", "bogus"),
    header("Upgrade", "h2c") + header("HTTP2-Settings", "AAMAAABkAARAAAAAAAIAAAAA"),
    header("Upgrade", "websocket"),
    header("Accept", "text/event-stream"),
    header("Content-Type", "application/json") + header("Content-Type", "text/plain"),
    header("Content-Encoding", "gzip"),
    header("X-Request-Id", "\u00ff".repeat(300)),
    header("X-Forwarded-For", "::::, 999.1.1.1"),
  );
  return fc.tuple(host, auth, fc.array(odd, { maxLength: 2 })).map(([h, a, rest]) => h + a + rest.join(""));
}

const JSON_BODIES = [
  '{"name":"raw"}',
  '{"name":"\ud800"}',
  '{"query":"{ __typename }"}',
  '{"query":"{ __typename }","variables":{"a":"\udfff"}}',
  "[".repeat(5000) + "]".repeat(5000),
  "{",
  "\u00ff\u00fe",
];

/** Content-Length, Transfer-Encoding and body together: each one consistent, absurd, or contradictory. */
const framing: fc.Arbitrary<{ head: string; body: Buffer }> = fc.constantFrom(...JSON_BODIES).chain((text) => {
  const body = wtf8(text);
  const type = header("Content-Type", "application/json");
  const chunk = (b: Buffer) => Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from("\r\n")]);
  const end = Buffer.from("0\r\n\r\n");
  return fc.constantFrom(
    { head: "", body: Buffer.alloc(0) },
    { head: type + header("Content-Length", String(body.length)), body },
    // Longer than announced: the rest is read as a next (malformed) request.
    { head: type + header("Content-Length", "1"), body },
    // Announced beyond every body limit (50 MiB for scanner reports, 1 MiB for the rest): refused
    // (413) before any of it is read.
    ...["52428801", "1000000000000", "99999999999999999999", "18446744073709551616"].map((n) => ({
      head: type + header("Content-Length", n),
      body,
    })),
    // Malformed lengths; a lenient parser reads some as 2 or 3 (" 2", "2,3"), so the body is at least that long.
    ...["-1", "abc", "1e3", "+2", "0x2", " 2", "2, 2", "2,3", ""].map((n) => ({
      head: type + header("Content-Length", n),
      body: Buffer.concat([body, Buffer.from("   ")]),
    })),
    { head: type + header("Content-Length", String(body.length)).repeat(2), body },
    { head: type + header("Content-Length", String(body.length)) + header("Content-Length", "0"), body },
    { head: type + header("Transfer-Encoding", "chunked"), body: Buffer.concat([chunk(body), end]) },
    {
      head: type + header("Transfer-Encoding", "chunked"),
      body: Buffer.concat([
        chunk(body.subarray(0, 1)),
        chunk(body.subarray(1)),
        Buffer.from("0\r\nX-Trailer: 1\r\n\r\n"),
      ]),
    },
    {
      head: type + header("Transfer-Encoding", "chunked"),
      body: Buffer.concat([Buffer.from(`${body.length.toString(16)};ext="x"\r\n`), body, Buffer.from("\r\n"), end]),
    },
    {
      head: type + header("Transfer-Encoding", "chunked"),
      body: Buffer.concat([Buffer.from("zz\r\n"), body, Buffer.from("\r\n"), end]),
    },
    {
      head: type + header("Transfer-Encoding", "chunked"),
      body: Buffer.concat([Buffer.from("ffffffffffffffffffff\r\n"), body, Buffer.from("\r\n"), end]),
    },
    {
      head: type + header("Transfer-Encoding", "chunked"),
      body: Buffer.concat([Buffer.from("1\r\n"), body, Buffer.from("\r\n"), end]),
    },
    {
      head: type + header("Transfer-Encoding", "chunked") + header("Content-Length", String(body.length)),
      body: Buffer.concat([chunk(body), end]),
    },
    ...["gzip", "chunked, chunked", "gzip, chunked", "identity", "Chunked", " chunked", "chunked\t", "chunked;q=1"].map(
      (te) => ({
        head: type + header("Transfer-Encoding", te),
        body: Buffer.concat([chunk(body), end]),
      }),
    ),
  );
});

export function rawRequests(fixtures: RawFixtures): fc.Arbitrary<RawFuzzRequest> {
  return fc
    .record({
      method: fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom("GET", "POST", "PUT", "DELETE") },
        { weight: 3, arbitrary: fc.constantFrom(...METHODS) },
      ),
      target: target(fixtures),
      version: fc.oneof(
        { weight: 8, arbitrary: fc.constant("HTTP/1.1") },
        { weight: 1, arbitrary: fc.constantFrom(...VERSIONS) },
      ),
      separator: fc.oneof(
        { weight: 10, arbitrary: fc.constant(" ") },
        { weight: 1, arbitrary: fc.constantFrom("  ", "\t", "") },
      ),
      headers: headers(fixtures.credentials),
      framing,
    })
    .map(({ method, target, version, separator, headers, framing }) => {
      const head = `${method}${separator}${target}${separator}${version}\r\n${headers}${framing.head}Connection: close\r\n\r\n`;
      // latin1 keeps the bytes 0x80–0xFF the generators put in as such.
      return withDescription({
        kind: "raw" as const,
        bytes: Buffer.concat([Buffer.from(head, "latin1"), framing.body]),
      });
    });
}
