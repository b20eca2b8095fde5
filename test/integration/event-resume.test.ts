// Subscriptions that resume (docs/spec/CONTRACT.md §14): clients over graphql-ws and SSE that drop mid-burst and come
// back with the last cursor they received get every event once, in log order, whether they replay
// alone or join a subscription others share; SSE ids are the cursors and Last-Event-ID resumes; an
// expired cursor is CURSOR_EXPIRED; the scopes narrow what is replayed.
import type { Client } from "graphql-ws";
import { DISPATCHER_NAME } from "../../src/dispatcher/dispatcher.ts";
import { EVENT_RETENTION_NAME, type EventRetention } from "../../src/events/event-retention.ts";
import type { EventType } from "../../src/events/catalog.ts";
import { recordEvents } from "../../src/events/outbox.ts";
import { newId } from "../../src/ids.ts";
import { wsClient } from "../helpers/graphql.ts";
import { eventually } from "../helpers/scan-engines.ts";
import { openSse, type SseEvent } from "../helpers/sse.ts";
import { sampleEvent } from "../helpers/sample-events.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({}, { workers: [DISPATCHER_NAME] });
});
afterAll(() => t.close());

const bearer = async (scopes = ["admin"]) => ({ authorization: `Bearer ${await t.token(scopes)}` });

/**
 * Commits `total` events about `applicationId` from 8 concurrent writers, in transactions of 1 to 4
 * events, some of them held open a while, as a burst of scans would.
 */
async function burst(applicationId: string, total: number, types: EventType[] = ["scan.completed"]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async (_, writer) => {
      while (next < total) {
        const size = Math.min(total - next, 1 + ((next + writer) % 4));
        const batch = Array.from({ length: size }, (_, i) =>
          sampleEvent(types[(next + i) % types.length]!, applicationId, next + i),
        );
        next += size;
        await t.app.db.prisma.$transaction(async (tx) => {
          await recordEvents(tx, batch);
          if (writer % 3 === 0) await new Promise((r) => setTimeout(r, 30));
        });
      }
    }),
  );
}

/** The application's events in log order, as GET /events reads them (once `count` are there, when given). */
async function logOf(
  applicationId: string,
  token?: string,
  count = 0,
): Promise<{ id: string; type: string; cursor: string }[]> {
  return eventually(async () => {
    const log = await readLogOf(applicationId, token);
    return log.length >= count && log;
  });
}

async function readLogOf(
  applicationId: string,
  token?: string,
): Promise<{ id: string; type: string; cursor: string }[]> {
  const events: { id: string; type: string; cursor: string }[] = [];
  let path: string | undefined = `/events?applicationId=${applicationId}&limit=500`;
  while (path) {
    const res = await t.request("GET", path, { token });
    expect(res.status).toBe(200);
    events.push(...res.body);
    path = /<[^>]*?(\/events\?[^>]*)>; rel="next"/.exec(res.headers.get("link") ?? "")?.[1];
  }
  return events;
}

/** Commits one event and returns its cursor once it is in the log: a point to resume after. */
async function cursorNow(applicationId: string): Promise<string> {
  const before = (await readLogOf(applicationId)).length;
  await t.app.db.prisma.$transaction((tx) => recordEvents(tx, [sampleEvent("scan.started", applicationId, -1)]));
  return (await logOf(applicationId, undefined, before + 1)).at(-1)!.cursor;
}

const QUERY =
  "subscription($app: ID, $after: String) { events(applicationId: $app, types: [SCAN_COMPLETED], after: $after) { eventId cursor } }";

interface Received {
  eventId: string;
  cursor: string;
}

/**
 * Subscribes over graphql-ws after `after`, takes `take` events, then drops the connection (as a
 * train going into a tunnel would); resolves with what it received.
 */
function session(variables: Record<string, unknown>, take: number): Promise<Received[]> {
  return new Promise((resolve, reject) => {
    void bearer().then((params) => {
      const client = wsClient(t, params);
      const got: Received[] = [];
      const stop = () => void Promise.resolve(client.dispose()).then(() => resolve(got));
      client.subscribe<{ events: Received }>(
        { query: QUERY, variables },
        {
          next: ({ data, errors }) => {
            if (errors) return reject(new Error(JSON.stringify(errors)));
            got.push(data!.events);
            if (got.length >= take) stop();
          },
          error: reject,
          complete: () => resolve(got),
        },
      );
    });
  });
}

describe("graphql-ws clients resuming with their last cursor", () => {
  it("receive every event of a burst once, in log order, across disconnections, beside a client that stays", async () => {
    const app = newId();
    const total = 400;
    const start = await cursorNow(app);
    // A client that stays connected the whole time shares the subscription the resuming ones join.
    const staying: Received[] = [];
    const stayingClient: Client = wsClient(t, await bearer());
    stayingClient.subscribe<{ events: Received }>(
      { query: QUERY, variables: { app, after: start } },
      {
        next: ({ data }) => void staying.push(data!.events),
        error: () => {},
        complete: () => {},
      },
    );

    const producing = burst(app, total);
    const received: Received[] = [];
    let after = start;
    let sessions = 0;
    while (received.length < total) {
      const got = await session({ app, after }, Math.min(37 + sessions * 11, total - received.length));
      sessions++;
      received.push(...got);
      if (got.length) after = got.at(-1)!.cursor;
      if (sessions > 100) throw new Error(`still ${total - received.length} events short after ${sessions} sessions`);
    }
    await producing;
    await eventually(async () => staying.length >= total);
    await stayingClient.dispose();

    const log = (await logOf(app, undefined, total + 1)).filter((e) => e.type === "scan.completed");
    expect(log).toHaveLength(total);
    expect(received.map((e) => e.eventId)).toEqual(log.map((e) => e.id));
    expect(received.map((e) => e.cursor)).toEqual(log.map((e) => e.cursor));
    expect(staying.map((e) => e.eventId)).toEqual(log.map((e) => e.id));
    expect(sessions).toBeGreaterThan(3);
  });

  it("replay alone when nobody else subscribes, then go on live", async () => {
    const app = newId();
    const start = await cursorNow(app);
    await burst(app, 50);
    const received: Received[] = [];
    const client = wsClient(t, await bearer());
    try {
      client.subscribe<{ events: Received }>(
        { query: QUERY, variables: { app, after: start } },
        {
          next: ({ data }) => void received.push(data!.events),
          error: () => {},
          complete: () => {},
        },
      );
      await eventually(async () => received.length >= 50);
      await burst(app, 30); // live, after the replay
      await eventually(async () => received.length >= 80);
      await new Promise((r) => setTimeout(r, 200));
      const log = (await logOf(app, undefined, 81)).filter((e) => e.type === "scan.completed");
      expect(received.map((e) => e.eventId)).toEqual(log.map((e) => e.id));
    } finally {
      await client.dispose();
    }
  });

  it("start from eventLogHead: after it, every event committed since it was read, and only those; it needs an event read scope", async () => {
    const app = newId();
    await burst(app, 10);
    await logOf(app, undefined, 10); // in the log, before the head is read
    const head = await t.request("POST", "/graphql", { body: { query: "{ eventLogHead }" } });
    const after = head.body.data.eventLogHead as string;
    await burst(app, 20); // after the head was read, before the subscription
    const received: Received[] = [];
    const client = wsClient(t, await bearer());
    try {
      client.subscribe<{ events: Received }>(
        { query: QUERY, variables: { app, after } },
        {
          next: ({ data }) => void received.push(data!.events),
          error: () => {},
          complete: () => {},
        },
      );
      await eventually(async () => received.length >= 20);
      await burst(app, 5); // live
      await eventually(async () => received.length >= 25);
      await new Promise((r) => setTimeout(r, 200));
      const log = (await logOf(app, undefined, 35)).filter((e) => e.type === "scan.completed");
      expect(received.map((e) => e.eventId)).toEqual(log.slice(10).map((e) => e.id));
    } finally {
      await client.dispose();
    }
    const forbidden = await t.request("POST", "/graphql", {
      body: { query: "{ eventLogHead }" },
      token: await t.token(["applications:write"]),
    });
    expect(forbidden.body.errors[0].extensions.code).toBe("FORBIDDEN");
  });

  it("answer a cursor that is not one with BAD_USER_INPUT", async () => {
    const client = wsClient(t, await bearer());
    try {
      const result = await new Promise<unknown>((resolve) => {
        client.subscribe(
          { query: QUERY, variables: { app: newId(), after: "not-a-cursor" } },
          { next: resolve, error: resolve, complete: () => {} },
        );
      });
      expect(JSON.stringify(result)).toMatch(/BAD_USER_INPUT/);
    } finally {
      await client.dispose();
    }
  });
});

describe("SSE", () => {
  const SSE_QUERY =
    "subscription($app: ID) { events(applicationId: $app, types: [SCAN_COMPLETED]) { eventId cursor } }";

  it("sends each event's cursor as its id, and resumes after Last-Event-ID, every event once", async () => {
    const app = newId();
    const total = 200;
    const start = await cursorNow(app);
    const token = await t.token(["scans:read"]);
    const producing = burst(app, total);
    const received: { id?: string; eventId: string; cursor: string }[] = [];
    let lastEventId = start;
    let connections = 0;
    while (received.length < total) {
      connections++;
      let mine = 0;
      let cut: () => void = () => {};
      const cutAt = 23 + connections * 7;
      const stream = await openSse(
        t.baseUrl,
        { query: SSE_QUERY, variables: { app }, token, lastEventId },
        (e: SseEvent) => {
          if (e.event !== "next" || mine >= cutAt) return; // after the cut, nothing more is "received"
          const { data } = JSON.parse(e.data) as { data: { events: { eventId: string; cursor: string } } };
          received.push({ id: e.id, ...data.events });
          lastEventId = e.id!;
          if (++mine >= cutAt || received.length >= total) cut();
        },
      );
      expect(stream.status).toBe(200);
      cut = stream.abort;
      await stream.ended;
      if (connections > 60) throw new Error(`still ${total - received.length} events short`);
    }
    await producing;
    const log = (await logOf(app, undefined, total + 1)).filter((e) => e.type === "scan.completed");
    expect(received.map((e) => e.eventId)).toEqual(log.map((e) => e.id));
    for (const e of received) expect(e.id).toBe(e.cursor);
    expect(connections).toBeGreaterThan(3);
  });
});

describe("what a replay may not give", () => {
  it("an expired cursor: REST 410 cursor_expired, GraphQL CURSOR_EXPIRED, for a subscription as for the query", async () => {
    const app = newId();
    const old = await cursorNow(app);
    await cursorNow(app);
    // Everything so far is older than the retention: the retention worker deletes it.
    await t.app.db.pool.query(
      "UPDATE events SET occurred_at = occurred_at - interval '40 days' WHERE position IS NOT NULL",
    );
    const retention = t.app.workers.find((w) => w.name === EVENT_RETENTION_NAME) as EventRetention;
    expect(await retention.runOnce()).toBeGreaterThan(0);

    const rest = await t.request("GET", `/events?after=${old}`);
    expect(rest.status).toBe(410);
    expect(rest.body).toMatchObject({ status: 410, code: "cursor_expired", type: "/problems/cursor_expired" });
    const query = await t.request("POST", "/graphql", {
      body: {
        query: "query($after: String) { events(after: $after) { edges { cursor } } }",
        variables: { after: old },
      },
    });
    expect(query.body.errors[0].extensions.code).toBe("CURSOR_EXPIRED");

    const client = wsClient(t, await bearer());
    try {
      const result = await new Promise<unknown>((resolve) => {
        client.subscribe(
          { query: QUERY, variables: { app, after: old } },
          { next: resolve, error: resolve, complete: () => {} },
        );
      });
      expect(JSON.stringify(result)).toMatch(/CURSOR_EXPIRED/);
    } finally {
      await client.dispose();
    }
  });

  it("events of a type the token may not read: the replay of what it may read leaves them out, asking for them is FORBIDDEN", async () => {
    const app = newId();
    const start = await cursorNow(app);
    await burst(app, 30, ["scan.completed", "vulnerability.created", "policy.violated"]);
    const token = await t.token(["scans:read"]);
    const rest = (await logOf(app, token, 11)).filter((e) => e.cursor !== start);
    expect(rest.map((e) => e.type).every((type) => type.startsWith("scan."))).toBe(true);
    expect(rest).toHaveLength(10);
    expect((await t.request("GET", `/events?types=policy.violated`, { token })).status).toBe(403);

    const client = wsClient(t, { authorization: `Bearer ${token}` });
    try {
      const replayed: { eventType: string }[] = [];
      client.subscribe<{ events: { eventType: string } }>(
        {
          query:
            "subscription($app: ID, $after: String) { events(applicationId: $app, types: [SCAN_COMPLETED, SCAN_STARTED], after: $after) { eventType } }",
          variables: { app, after: start },
        },
        { next: ({ data }) => void replayed.push(data!.events), error: () => {}, complete: () => {} },
      );
      await eventually(async () => replayed.length >= 10);
      expect(replayed.every((e) => e.eventType === "scan.completed")).toBe(true);
      const refused = await new Promise<unknown>((resolve) => {
        client.subscribe(
          {
            query: "subscription($after: String) { events(types: [POLICY_VIOLATED], after: $after) { eventId } }",
            variables: { after: start },
          },
          { next: resolve, error: resolve, complete: () => {} },
        );
      });
      expect(JSON.stringify(refused)).toMatch(/FORBIDDEN/);
    } finally {
      await client.dispose();
    }
  });
});
