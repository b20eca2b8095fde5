// Subscriptions over a real graphql-ws client and over SSE, fed by committed outbox events.
import { jest } from "@jest/globals";
import type { Client } from "graphql-ws";
import type { Socket } from "node:net";
import WebSocket from "ws";
import { mintToken } from "../../src/auth/mint-token.ts";
import { DISPATCHER_NAME } from "../../src/dispatcher/dispatcher.ts";
import type { EventData, EventType } from "../../src/events/catalog.ts";
import { recordEvent } from "../../src/events/outbox.ts";
import { newId } from "../../src/ids.ts";
import { wsClient } from "../helpers/graphql.ts";
import { startTestApp, TEST_JWT_SECRET, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
const clients: Client[] = [];
beforeAll(async () => {
  t = await startTestApp({}, { workers: [DISPATCHER_NAME] });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.dispose()));
  await t.close();
});

const bearer = async (scopes = ["admin"]) => ({ authorization: `Bearer ${await t.token(scopes)}` });

function commitEvent<T extends EventType>(type: T, data: EventData[T], options: { rollback?: boolean } = {}) {
  return t.app.db.prisma
    .$transaction(async (tx) => {
      const id = await recordEvent(tx, type, data, {
        applicationId: (data as { applicationId: string }).applicationId,
      });
      if (options.rollback) throw new Error("rolled back");
      return id;
    })
    .catch((err: Error) => {
      if (options.rollback && err.message === "rolled back") return null;
      throw err;
    });
}

const scanData = (applicationId: string) => ({
  id: newId(),
  applicationId,
  scanType: "sast",
  status: "completed",
  triggeredBy: "tester",
  startedAt: new Date().toISOString(),
  completedAt: new Date().toISOString(),
  summary: { totalFindings: 3, critical: 1, high: 1, medium: 1, low: 0 },
});

const vulnData = (applicationId: string, severity: string) => ({
  id: newId(),
  severity,
  applicationId,
  title: `finding ${severity}`,
  createdAt: new Date().toISOString(),
});

interface Next {
  data?: Record<string, any>;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/** Subscribes and collects results; `settled` resolves on error/complete. */
function subscribe(client: Client, query: string, variables?: Record<string, unknown>) {
  const results: Next[] = [];
  let failure: unknown;
  const settled = new Promise<void>((resolve) => {
    client.subscribe(
      { query, variables },
      {
        next: (value) => results.push(value as Next),
        error: (err) => {
          failure = err;
          resolve();
        },
        complete: () => resolve(),
      },
    );
  });
  return { results, settled, failure: () => failure };
}

/**
 * The server registers a subscription asynchronously: keep committing `produce()` (bounded) until
 * the subscriber has seen something, then return the ids committed.
 */
async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 250 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
  expect(check()).toBe(true);
}

async function produceUntilSeen(seen: () => boolean, produce: () => Promise<string | null>): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < 50 && !seen(); i++) {
    const id = await produce();
    if (id) ids.push(id);
    for (let j = 0; j < 10 && !seen(); j++) await new Promise((r) => setTimeout(r, 20));
  }
  return ids;
}

describe("graphql-ws subscriptions", () => {
  it("delivers committed events only, typed and as envelopes, with filters", async () => {
    const client = wsClient(t, await bearer());
    clients.push(client);
    const appA = newId();
    const appB = newId();
    const envelopes = subscribe(
      client,
      `subscription($app: ID) { events(types: [SCAN_COMPLETED], applicationId: $app) { eventId eventType timestamp data } }`,
      { app: appB },
    );
    const vulns = subscribe(
      client,
      `subscription { vulnerabilityCreated(minSeverity: HIGH) { id severity applicationId title } }`,
    );

    const committed = await produceUntilSeen(
      () => envelopes.results.length > 0,
      async () => {
        await commitEvent("scan.completed", scanData(appB), { rollback: true }); // never heard
        await commitEvent("scan.completed", scanData(appA)); // other application: filtered out
        return commitEvent("scan.completed", scanData(appB));
      },
    );
    const first = envelopes.results[0]!;
    expect(first.errors).toBeUndefined();
    expect(committed).toContain(first.data!.events.eventId);
    expect(first.data!.events).toMatchObject({
      eventType: "scan.completed",
      data: { applicationId: appB, status: "completed" },
    });
    for (const r of envelopes.results) {
      expect(r.data!.events.data.applicationId).toBe(appB);
      expect(committed).toContain(r.data!.events.eventId); // never a rolled-back one
    }
    // The envelope is exactly what the outbox row holds.
    const row = await t.app.db.prisma.event.findUniqueOrThrow({ where: { id: first.data!.events.eventId } });
    expect(first.data!.events.timestamp).toBe(row.occurredAt.toISOString());
    expect(first.data!.events.data).toEqual(row.data);

    await produceUntilSeen(
      () => vulns.results.length > 0,
      async () => {
        await commitEvent("vulnerability.created", vulnData(appA, "medium")); // below minSeverity
        return commitEvent("vulnerability.created", vulnData(appA, "critical"));
      },
    );
    expect(vulns.results.length).toBeGreaterThan(0);
    for (const r of vulns.results) expect(r.data!.vulnerabilityCreated.severity).toBe("CRITICAL");
  });

  it("answers FORBIDDEN when the token lacks the read scope of what is asked", async () => {
    const client = wsClient(t, await bearer(["scans:read"]));
    clients.push(client);
    const vulns = subscribe(client, `subscription { vulnerabilityCreated { id } }`);
    await vulns.settled;
    expect(JSON.stringify(vulns.failure() ?? vulns.results)).toMatch(/FORBIDDEN/);
    const mixed = subscribe(client, `subscription { events(types: [SCAN_COMPLETED, POLICY_VIOLATED]) { eventId } }`);
    await mixed.settled;
    expect(JSON.stringify(mixed.failure() ?? mixed.results)).toMatch(/FORBIDDEN/);
    const allowed = subscribe(client, `subscription { scanUpdated { id status } }`);
    await produceUntilSeen(
      () => allowed.results.length > 0,
      () => commitEvent("scan.completed", scanData(newId())),
    );
    expect(allowed.results[0]!.data!.scanUpdated.status).toBe("COMPLETED");
  });

  it("refuses variables that do not coerce with BAD_USER_INPUT, and takes arguments written in the document", async () => {
    const client = wsClient(t, await bearer());
    clients.push(client);
    const badId = subscribe(client, `subscription($app: ID) { events(applicationId: $app) { eventId } }`, {
      app: { not: "an id" },
    });
    const badType = subscribe(client, `subscription($types: [EventType!]) { events(types: $types) { eventId } }`, {
      types: ["NOT_A_TYPE"],
    });
    for (const refused of [badId, badType]) {
      await refused.settled;
      // The subscription's one result, as graphql-ws sends an operation that does not start.
      expect(refused.failure()).toBeUndefined();
      expect(refused.results).toHaveLength(1);
      const { data, errors } = refused.results[0]!;
      expect(data).toBeUndefined();
      expect(errors).toHaveLength(1);
      expect(errors![0]!.message).toMatch(/^Variable "\$(app|types)" got invalid value/);
      expect(errors![0]!.extensions?.code).toBe("BAD_USER_INPUT");
    }

    // Literal arguments reach the field's resolver as arguments (the operation has no variables).
    const [appA, appB] = [newId(), newId()];
    const literal = subscribe(client, `subscription { scanCompleted(applicationId: "${appB}") { applicationId } }`);
    await produceUntilSeen(
      () => literal.results.length > 0,
      async () => {
        await commitEvent("scan.completed", scanData(appA));
        return commitEvent("scan.completed", scanData(appB));
      },
    );
    expect(literal.results.map((r) => r.data!.scanCompleted.applicationId)).toEqual(literal.results.map(() => appB));
  });

  it.each([
    ["no connection_init payload", undefined],
    ["a malformed token", { authorization: "Bearer nope" }],
    ["a token signed with another key", "other-key"],
  ])("closes the socket with 4403 for %s", async (_label, params) => {
    let connectionParams = params as Record<string, unknown> | undefined;
    if (params === "other-key") {
      connectionParams = {
        Authorization: `Bearer ${await mintToken({ secret: "x".repeat(40), sub: "eve", scopes: ["admin"] })}`,
      };
    }
    const closed = new Promise<number>((resolve) => clients.push(wsClient(t, connectionParams, resolve)));
    expect(await closed).toBe(4403);
  });

  it("accepts the Authorization spelling and closes with 4403 when the token expires", async () => {
    const exp = Math.floor(Date.now() / 1000) + 2;
    const token = await mintToken({ secret: TEST_JWT_SECRET, sub: "short", scopes: ["admin"], expiresIn: exp });
    let closedWith: number | undefined;
    const client = wsClient(t, { Authorization: `Bearer ${token}` }, (code) => (closedWith = code));
    clients.push(client);
    const sub = subscribe(client, `subscription { scanCompleted { id } }`);
    await produceUntilSeen(
      () => sub.results.length > 0,
      () => commitEvent("scan.completed", scanData(newId())),
    );
    expect(sub.results.length).toBeGreaterThan(0); // the connection was accepted
    for (let i = 0; i < 100 && closedWith === undefined; i++) await new Promise((r) => setTimeout(r, 50));
    expect(closedWith).toBe(4403);
    expect(Date.now()).toBeGreaterThanOrEqual(exp * 1000);
  });
});

describe("graphql-ws message size", () => {
  it("closes with 1009 on a message over the 1 MiB body ceiling, before authentication", async () => {
    const socket = new WebSocket(t.baseUrl.replace(/^http/, "ws") + "/graphql", "graphql-transport-ws");
    const closed = new Promise<number>((resolve) => socket.on("close", (code) => resolve(code)));
    socket.on("error", () => {});
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
    // graphql-ws reports the socket's error on the console; expected here, so kept out of the output.
    const consoleError = console.error;
    console.error = () => {};
    try {
      socket.send(JSON.stringify({ type: "connection_init", payload: { pad: "x".repeat(1024 * 1024 + 1) } }));
      expect(await closed).toBe(1009);
    } finally {
      console.error = consoleError;
    }
  });
});

describe("subscribers of the same subscription", () => {
  it("share one execution per document, variables and scopes; each ends its own", async () => {
    const streamsOpened = jest.spyOn(t.app.events, "subscribe");
    try {
      const query = "subscription($app: ID) { events(types: [SCAN_COMPLETED], applicationId: $app) { eventId data } }";
      const app = newId();
      const open = async (scopes: string[]) => {
        const client = wsClient(t, await bearer(scopes));
        clients.push(client);
        return { client, sub: subscribe(client, query, { app }) };
      };
      const [a, b, narrower] = [await open(["admin"]), await open(["admin"]), await open(["scans:read"])];
      const everyone = [a, b, narrower];
      await produceUntilSeen(
        () => everyone.every((s) => s.sub.results.length > 0),
        () => commitEvent("scan.completed", scanData(app)),
      );
      // Two scope sets, two executions: not one per socket.
      expect(streamsOpened).toHaveBeenCalledTimes(2);

      const eventIdsAfter = (s: (typeof everyone)[number], from: number) =>
        s.sub.results.slice(from).map((r) => r.data!.events.eventId);
      const marks = everyone.map((s) => s.sub.results.length);
      const next = [
        await commitEvent("scan.completed", scanData(app)),
        await commitEvent("scan.completed", scanData(app)),
      ];
      await waitFor(() => everyone.every((s, i) => s.sub.results.length >= marks[i]! + 2));
      everyone.forEach((s, i) => expect(eventIdsAfter(s, marks[i]!)).toEqual(next));

      // The first subscriber leaving ends neither the other nor the shared execution; a newcomer joins it.
      await a.client.dispose();
      const late = await open(["admin"]);
      await produceUntilSeen(
        () => late.sub.results.length > 0,
        () => commitEvent("scan.completed", scanData(app)),
      );
      expect(streamsOpened).toHaveBeenCalledTimes(2);
      const [bMark, lateMark] = [b.sub.results.length, late.sub.results.length];
      const last = await commitEvent("scan.completed", scanData(app));
      await waitFor(() => b.sub.results.length > bMark && late.sub.results.length > lateMark);
      expect(eventIdsAfter(b, bMark)).toEqual([last]);
      expect(eventIdsAfter(late, lateMark)).toEqual([last]);
      // Another application's events are another subscription (variables are part of what is shared).
      const otherApp = newId();
      const other = subscribe(late.client, query, { app: otherApp });
      await produceUntilSeen(
        () => other.results.length > 0,
        async () => {
          await commitEvent("scan.completed", scanData(app));
          return commitEvent("scan.completed", scanData(otherApp));
        },
      );
      expect(other.results.length).toBeGreaterThan(0);
      expect(other.results.every((r) => r.data!.events.data.applicationId === otherApp)).toBe(true);
      expect(streamsOpened).toHaveBeenCalledTimes(3);
    } finally {
      streamsOpened.mockRestore();
    }
  });
});

describe("a graphql-ws client that stops reading", () => {
  const LIMIT = 64 * 1024;

  it("is closed with 1008 once its unsent messages pass the limit, and its socket released", async () => {
    const slow = await startTestApp({ GRAPHQL_WS_MAX_BUFFERED_BYTES: String(LIMIT) }, { workers: [DISPATCHER_NAME] });
    const serverSockets: Socket[] = [];
    slow.app.server.prependListener("upgrade", (_req, socket) => serverSockets.push(socket as Socket));
    const socket = new WebSocket(slow.baseUrl.replace(/^http/, "ws") + "/graphql", "graphql-transport-ws");
    try {
      const closed = new Promise<{ code: number; reason: string }>((resolve) =>
        socket.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
      );
      let received = 0;
      socket.on("message", (message) => {
        const { type } = JSON.parse(message.toString());
        if (type === "connection_ack")
          socket.send(
            JSON.stringify({
              id: "1",
              type: "subscribe",
              payload: { query: "subscription { events(types: [SCAN_COMPLETED]) { eventId data } }" },
            }),
          );
        if (type === "next") received++;
      });
      await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
      socket.send(
        JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${await slow.token()}` } }),
      );
      const commit = () =>
        slow.app.db.prisma.$transaction((tx) =>
          recordEvent(tx, "scan.completed", { ...scanData(newId()), pad: "x".repeat(100_000) } as never, {}),
        );
      let committed = (await produceUntilSeen(() => received > 0, commit)).length;
      expect(received).toBeGreaterThan(0);

      // The client stops reading; events keep coming until the server holds more than LIMIT unsent.
      (socket as unknown as { _socket: Socket })._socket.pause();
      const [serverSide] = serverSockets;
      for (let i = 0; serverSide!.writableLength <= LIMIT && i < 1000; i++) {
        await commit();
        committed++;
        await new Promise((r) => setTimeout(r, 5));
      }
      expect(serverSide!.writableLength).toBeGreaterThan(LIMIT);
      // Committed after the socket was given up: never sent.
      const late = 5;
      for (let i = 0; i < late; i++) await commit();
      committed += late;
      await new Promise((r) => setTimeout(r, 200));

      // Reading again, the client finds the close frame behind what was already queued, not the rest.
      const serverClosed = new Promise((resolve) =>
        serverSide!.destroyed ? resolve(null) : serverSide!.once("close", resolve),
      );
      (socket as unknown as { _socket: Socket })._socket.resume();
      const stillOpen = new Promise<{ code: number; reason: string }>((r) =>
        setTimeout(() => r({ code: 0, reason: "still open after 8 s" }), 8000).unref(),
      );
      const { code, reason } = await Promise.race([closed, stillOpen]);
      expect(code).toBe(1008);
      expect(reason).toMatch(/too slow/);
      await serverClosed;
      expect(received).toBeLessThanOrEqual(committed - late);
    } finally {
      socket.terminate();
      await slow.close();
    }
  });
});

describe("events from real writes", () => {
  it("streams scanUpdated and vulnerabilityCreated produced by a REST trigger and the scan runner", async () => {
    const app = (await t.request("POST", "/applications", { body: { name: "live-app" } })).body.id;
    const client = wsClient(t, await bearer(["scans:read", "vulnerabilities:read"]));
    clients.push(client);
    const updates = subscribe(
      client,
      `subscription($app: ID) { scanUpdated(applicationId: $app) { id status summary { totalFindings } } }`,
      { app },
    );
    const vulns = subscribe(
      client,
      `subscription($app: ID) { vulnerabilityCreated(applicationId: $app) { id applicationId severity } }`,
      { app },
    );
    // A third subscription sent after the two on the same socket: once it hears a probe event,
    // the listener is up and the two before it are registered.
    const probe = subscribe(client, `subscription { events(types: [SCAN_FAILED]) { eventId } }`);
    await produceUntilSeen(
      () => probe.results.length > 0,
      () => commitEvent("scan.failed", { ...scanData(newId()), status: "failed" }),
    );

    const res = await t.request("POST", `/applications/${app}/scans`, { body: { scanType: "sca" } });
    expect(res.status).toBe(202);
    while ((await t.app.scanRunner.runOnce()) > 0);
    for (let i = 0; i < 200 && (updates.results.length < 2 || vulns.results.length === 0); i++)
      await new Promise((r) => setTimeout(r, 25));

    const statuses = updates.results.map((r) => r.data!.scanUpdated.status);
    expect(statuses).toEqual(["RUNNING", "COMPLETED"]);
    expect(updates.results.every((r) => r.data!.scanUpdated.id === res.body.id)).toBe(true);
    const restVulns = (await t.request("GET", `/applications/${app}/vulnerabilities?limit=500`)).body;
    for (let i = 0; i < 200 && vulns.results.length < restVulns.length; i++)
      await new Promise((r) => setTimeout(r, 25));
    expect(vulns.results.map((r) => r.data!.vulnerabilityCreated.id).sort()).toEqual(
      restVulns.map((v: { id: string }) => v.id).sort(),
    );
    expect(updates.results[1]!.data!.scanUpdated.summary.totalFindings).toBe(restVulns.length);
  });
});

describe("SSE subscriptions", () => {
  it("streams events over text/event-stream with the same auth", async () => {
    const unauth = await fetch(`${t.baseUrl}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ query: "subscription { scanCompleted { id } }" }),
    });
    expect(unauth.status).toBe(401);

    const controller = new AbortController();
    const res = await fetch(`${t.baseUrl}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", ...(await bearer(["scans:read"])) },
      body: JSON.stringify({ query: "subscription { scanCompleted { id applicationId } }" }),
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    const reader = res.body!.getReader();
    let text = "";
    const reading = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        text += new TextDecoder().decode(value);
      }
    })().catch(() => {});
    const appId = newId();
    await produceUntilSeen(
      () => text.includes("event: next"),
      () => commitEvent("scan.completed", scanData(appId)),
    );
    controller.abort();
    await reading;
    const data = JSON.parse(text.split("event: next\ndata: ")[1]!.split("\n")[0]!);
    expect(data.data.scanCompleted.applicationId).toBe(appId);
  });

  it("answers 400 with BAD_USER_INPUT for variables that do not coerce, as over graphql-ws", async () => {
    const res = await fetch(`${t.baseUrl}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", ...(await bearer()) },
      body: JSON.stringify({
        query: "subscription($app: ID) { scanCompleted(applicationId: $app) { id } }",
        variables: { app: [1] },
      }),
    });
    expect(res.status).toBe(400);
    const data = JSON.parse((await res.text()).split("event: next\ndata: ")[1]!.split("\n")[0]!);
    expect(data.errors).toHaveLength(1);
    expect(data.errors[0]).toMatchObject({
      message: expect.stringMatching(/^Variable "\$app" got invalid value/),
      extensions: { code: "BAD_USER_INPUT" },
    });
  });

  it("ends the stream when the token expires, as a graphql-ws socket closes", async () => {
    const exp = Math.floor(Date.now() / 1000) + 2;
    const token = await mintToken({ secret: TEST_JWT_SECRET, sub: "short-sse", scopes: ["admin"], expiresIn: exp });
    const res = await fetch(`${t.baseUrl}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: "subscription { scanCompleted { id } }" }),
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = "";
    const ended = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return Date.now();
        text += new TextDecoder().decode(value);
      }
    })();
    await produceUntilSeen(
      () => text.includes("event: next"),
      () => commitEvent("scan.completed", scanData(newId())),
    );
    const endedAt = await Promise.race([
      ended,
      new Promise<number>((_, reject) => setTimeout(() => reject(new Error("the stream outlived its token")), 8000)),
    ]);
    expect(endedAt).toBeGreaterThanOrEqual(exp * 1000);
  });
});
