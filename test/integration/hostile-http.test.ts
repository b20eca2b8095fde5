// Hostile HTTP around the operations rather than in their bodies: query strings that are not text,
// methods no route serves, requests Node's parser refuses, and streaming GraphQL answers to requests
// that never read them. Each answered in the service's own words, and none may end the process.
import net from "node:net";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
let token: string;
beforeAll(async () => {
  t = await startTestApp();
  token = await t.token();
});
afterAll(() => t.close());

/** Writes bytes on a fresh socket and reads until the server closes it (or `giveUpMs` passes). */
function exchange(bytes: string, giveUpMs = 5000): Promise<{ head: string; body: string; closedByServer: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(new URL(t.baseUrl).port), "127.0.0.1");
    let received = "";
    const finish = (closedByServer: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      const end = received.indexOf("\r\n\r\n");
      resolve({ head: received.slice(0, end), body: received.slice(end + 4), closedByServer });
    };
    const timer = setTimeout(() => finish(false), giveUpMs);
    socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
    socket.on("end", () => finish(true));
    socket.on("error", reject);
    socket.write(bytes);
  });
}

const statusOf = (head: string) => Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]);
const headerOf = (head: string, name: string) => new RegExp(`^${name}: (.*)$`, "im").exec(head)?.[1];

describe("query parameters that are not text", () => {
  it.each([
    ["an encoded lone surrogate", "/applications?owner=%ED%A0%80", "owner"],
    ["a broken escape", "/applications?tag=a%E0%A4%A", "tag"],
    ["a stray percent sign", "/applications?limit=5%", "limit"],
    ["U+0000", "/applications?owner=a%00b", "owner"],
    ["an encoded surrogate in a name", "/policies?%ED%BF%BF=1", "%ED%BF%BF"],
    [
      "an encoded lone surrogate on /graphql",
      "/graphql?query=%7B__typename%7D&operationName=%ED%A0%80",
      "operationName",
    ],
  ])("%s is a 400 naming the parameter", async (_what, path, parameter) => {
    const res = await t.request("GET", path);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ code: "validation_failed", errors: [{ path: parameter }] });
  });

  it("without a valid token, is a 401 on a protected route and GraphQL (authentication first), a 400 on a public one", async () => {
    for (const [path, token] of [
      ["/applications?owner=%ED%A0%80", null],
      ["/applications/x/vulnerabilities?severity=%ZZ", "not-a-token"],
      ["/graphql?query=%7B__typename%7D&operationName=%ED%A0%80", null],
    ] as const) {
      const res = await t.request("GET", path, { token, headers: { accept: "application/json" } });
      expect({ path, status: res.status, authenticate: res.headers.get("www-authenticate") }).toEqual({
        path,
        status: 401,
        authenticate: expect.stringMatching(/^Bearer/),
      });
    }
    const open = await t.request("GET", "/healthz?x=%ED%A0%80", { token: null });
    expect(open.status).toBe(400);
    expect(open.body).toMatchObject({ code: "validation_failed", errors: [{ path: "x" }] });
  });

  it("lets encoded Unicode and plus signs through (control)", async () => {
    await t.request("POST", "/applications", { body: { name: "query-text", owner: "équipe 💥" } });
    const res = await t.request("GET", `/applications?owner=${encodeURIComponent("équipe 💥").replace("%20", "+")}`);
    expect(res.status).toBe(200);
    expect(res.body.map((a: { name: string }) => a.name)).toEqual(["query-text"]);
  });
});

describe("requests no route serves", () => {
  it("answers CONNECT with 405 problem+json and Allow, not a reset", async () => {
    const { head, body } = await exchange("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
    expect(statusOf(head)).toBe(405);
    expect(headerOf(head, "Allow")).toBe("GET, HEAD, POST, PUT, DELETE");
    expect(headerOf(head, "Content-Type")).toBe("application/problem+json");
    expect(JSON.parse(body)).toMatchObject({ status: 405, code: "method_not_allowed" });
  });

  it.each([
    [
      "a space inside the request target",
      "GET /applications x/y HTTP/1.1\r\nHost: localhost\r\n\r\n",
      400,
      "validation_failed",
    ],
    [
      "a header without a colon",
      "GET /healthz HTTP/1.1\r\nHost: localhost\r\nNoColon\r\n\r\n",
      400,
      "validation_failed",
    ],
    [
      "a head over 16 KiB",
      `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
      431,
      "payload_too_large",
    ],
  ])("answers a request Node cannot parse (%s) with problem+json", async (_what, bytes, status, code) => {
    const { head, body, closedByServer } = await exchange(bytes);
    expect(statusOf(head)).toBe(status);
    expect(headerOf(head, "Content-Type")).toBe("application/problem+json");
    expect(JSON.parse(body)).toMatchObject({ status, code });
    expect(closedByServer).toBe(true);
  });
});

describe("streaming GraphQL answers", () => {
  it.each(["text/event-stream", "multipart/mixed"])(
    "survives HEAD /graphql asking for %s (a body never read)",
    async (accept) => {
      const head = await fetch(`${t.baseUrl}/graphql?query=%7B__typename%7D`, {
        method: "HEAD",
        headers: { accept, authorization: `Bearer ${token}` },
      });
      expect(head.status).toBe(405);
      // An error thrown while Koa discards the unread body would be unhandled: jest fails the test on
      // it, as it would end the service. The service answers on.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await t.request("POST", "/graphql", { body: { query: "{ __typename }" } })).body).toEqual({
        data: { __typename: "Query" },
      });
    },
  );

  it.each(["text/event-stream", "multipart/mixed"])(
    "honours Connection: close on an answer streamed as %s",
    async (accept) => {
      const { head, body, closedByServer } = await exchange(
        `GET /graphql?query=%7B__typename%7D HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\nAccept: ${accept}\r\nConnection: close\r\n\r\n`,
      );
      expect(statusOf(head)).toBe(200);
      expect(headerOf(head, "Connection")).toBe("close");
      expect(body).toContain('{"data":{"__typename":"Query"}}');
      expect(closedByServer).toBe(true);
    },
  );
});
