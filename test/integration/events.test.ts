// GET /events and the GraphQL `events` query (docs/spec/CONTRACT.md §14): the log oldest first, paged with
// Link rel=next (filters kept), only readable types, bad input as 400; and retention, which deletes
// what is older than EVENT_RETENTION_DAYS in batches without waiting on anyone and keeps what a
// pending delivery still needs.
import pg from "pg";
import { DISPATCHER_NAME, type WebhookDispatcher } from "../../src/dispatcher/dispatcher.ts";
import { EVENT_RETENTION_NAME, type EventRetention } from "../../src/events/event-retention.ts";
import type { EventType } from "../../src/events/catalog.ts";
import { decodeEventCursor, encodeEventCursor } from "../../src/events/event-log.ts";
import { recordEvents, type NewEvent } from "../../src/events/outbox.ts";
import { newId } from "../../src/ids.ts";
import { gql } from "../helpers/graphql.ts";
import { sampleEvent } from "../helpers/sample-events.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
let dispatcher: WebhookDispatcher;
let retention: EventRetention;
beforeAll(async () => {
  t = await startTestApp({ EVENT_RETENTION_DAYS: "7", AUDIT_RETENTION_DAYS: "30" });
  dispatcher = t.app.workers.find((w) => w.name === DISPATCHER_NAME) as WebhookDispatcher;
  retention = t.app.workers.find((w) => w.name === EVENT_RETENTION_NAME) as EventRetention;
});
afterAll(() => t.close());

/** Commits events (one transaction each, or all in one) and numbers them into the log; returns their ids in commit order. */
async function logged(events: NewEvent[], options: { oneTransaction?: boolean } = {}): Promise<string[]> {
  const ids: string[] = [];
  if (options.oneTransaction) ids.push(...(await t.app.db.prisma.$transaction((tx) => recordEvents(tx, events))));
  else for (const e of events) ids.push(...(await t.app.db.prisma.$transaction((tx) => recordEvents(tx, [e]))));
  await dispatcher.runOnce();
  return ids;
}

const nextLink = (res: { headers: Headers }) => /<([^>]+)>; rel="next"/.exec(res.headers.get("link") ?? "")?.[1];

describe("GET /events", () => {
  it("reads the log oldest first, a page at a time, the next page's link keeping the filters", async () => {
    const app = newId();
    const types: EventType[] = ["scan.completed", "vulnerability.created", "policy.violated"];
    const ids = await logged(Array.from({ length: 9 }, (_, n) => sampleEvent(types[n % 3]!, app, n)));
    await logged([sampleEvent("scan.completed", newId(), 99)]); // another application's

    const pages: { id: string; type: string }[][] = [];
    let url: string | undefined =
      `${t.baseUrl}/events?applicationId=${app}&types=scan.completed,policy.violated&limit=2`;
    while (url) {
      const res = await t.request("GET", url.slice(t.baseUrl.length));
      expect(res.status).toBe(200);
      pages.push(res.body);
      url = nextLink(res);
      if (url) {
        expect(new URL(url).searchParams.get("types")).toBe("scan.completed,policy.violated");
        expect(new URL(url).searchParams.get("applicationId")).toBe(app);
      }
    }
    const read = pages.flat();
    expect(read.map((e) => e.id)).toEqual(ids.filter((_, n) => n % 3 !== 1));
    expect(pages.slice(0, -1).every((page) => page.length === 2)).toBe(true);

    const [first] = read as unknown as { id: string; type: string; occurredAt: string; cursor: string; data: object }[];
    expect(Object.keys(first!).sort()).toEqual(["cursor", "data", "id", "occurredAt", "type"]);
    const row = await t.app.db.prisma.event.findUniqueOrThrow({ where: { id: first!.id } });
    expect(first).toMatchObject({
      type: "scan.completed",
      occurredAt: row.occurredAt.toISOString(),
      data: row.data as object,
    });

    // After the last event: nothing yet, and no next page; what is committed later comes next.
    const last = (read.at(-1) as unknown as { cursor: string }).cursor;
    const caughtUp = await t.request("GET", `/events?applicationId=${app}&after=${last}`);
    expect(caughtUp.status).toBe(200);
    expect(caughtUp.body).toEqual([]);
    expect(caughtUp.headers.get("link")).toBeNull();
    const [later] = await logged([sampleEvent("scan.completed", app, 10)]);
    expect(
      (await t.request("GET", `/events?applicationId=${app}&after=${last}`)).body.map((e: { id: string }) => e.id),
    ).toEqual([later]);
  });

  it("writes each event's data as it was recorded, byte for byte what a parse and a stringify would give", async () => {
    const app = newId();
    const title = 'Ünïcode ✓ "quoted" \\ back\u2028slash\n\ttab \u{1F512} </script>';
    const data = {
      id: newId(),
      severity: "critical",
      applicationId: app,
      title,
      createdAt: new Date().toISOString(),
      nested: { list: [1, -2.5, 1e21, null, true], empty: {} },
    };
    const [id] = await logged([{ type: "vulnerability.created", applicationId: app, data } as unknown as NewEvent]);

    const res = await t.request("GET", `/events?applicationId=${app}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(Number(res.headers.get("content-length"))).toBe(Buffer.byteLength(res.text));
    expect(res.text).toBe(JSON.stringify(res.body));
    expect(res.body).toEqual([
      { id, type: "vulnerability.created", occurredAt: expect.any(String), cursor: expect.any(String), data },
    ]);
    expect(Object.keys(res.body[0])).toEqual(["id", "type", "occurredAt", "cursor", "data"]);

    // The same event read without filters (the statement that reads a page in one pass).
    const before = encodeEventCursor(decodeEventCursor(res.body[0].cursor)! - 1);
    const unfiltered = await t.request("GET", `/events?after=${before}&limit=1`);
    expect(unfiltered.text).toBe(res.text);
  });

  it("writes pages of more events than Postgres writes in one piece, in order", async () => {
    const app = newId();
    const ids = await logged(
      Array.from({ length: 130 }, (_, n) => sampleEvent("vulnerability.created", app, n)),
      { oneTransaction: true },
    );

    const filtered = await t.request("GET", `/events?applicationId=${app}&limit=120`);
    expect(filtered.text).toBe(JSON.stringify(filtered.body));
    expect(filtered.body.map((e: { id: string }) => e.id)).toEqual(ids.slice(0, 120));
    const rest = await t.request("GET", nextLink(filtered)!.slice(t.baseUrl.length));
    expect(rest.body.map((e: { id: string }) => e.id)).toEqual(ids.slice(120));

    const before = encodeEventCursor(decodeEventCursor(filtered.body[0].cursor)! - 1);
    const unfiltered = await t.request("GET", `/events?after=${before}&limit=130`);
    expect(unfiltered.text).toBe(JSON.stringify(unfiltered.body));
    expect(unfiltered.body.map((e: { id: string }) => e.id)).toEqual(ids);
    expect(unfiltered.body.map((e: { cursor: string }) => decodeEventCursor(e.cursor))).toEqual(
      ids.map((_, n) => decodeEventCursor(before)! + n + 1),
    );
    expect(unfiltered.headers.get("content-length")).toBe(String(Buffer.byteLength(unfiltered.text)));
    expect(unfiltered.headers.get("content-type")).toBe("application/json; charset=utf-8");

    const head = await t.request("HEAD", `/events?after=${before}&limit=130`);
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(Buffer.byteLength(unfiltered.text)));
    expect(head.text).toBe("");
  });

  it("leaves out events of a type this version does not know, and pages on past them", async () => {
    const app = newId();
    const unknown = { ...sampleEvent("scan.completed", app, 1), type: "scan.teleported" } as unknown as NewEvent;
    const [first, , third] = await logged([
      sampleEvent("scan.completed", app, 0),
      unknown,
      sampleEvent("scan.completed", app, 2),
    ]);
    const ids = (res: { body: { id: string }[] }) => res.body.map((e) => e.id);

    const filtered = await t.request("GET", `/events?applicationId=${app}&limit=2`);
    expect(ids(filtered)).toEqual([first]);
    expect(ids(await t.request("GET", nextLink(filtered)!.slice(t.baseUrl.length)))).toEqual([third]);

    const before = encodeEventCursor(decodeEventCursor(filtered.body[0].cursor)! - 1);
    const unfiltered = await t.request("GET", `/events?after=${before}&limit=2`);
    expect(ids(unfiltered)).toEqual([first]);
    expect(ids(await t.request("GET", `${nextLink(unfiltered)!.slice(t.baseUrl.length)}`)).slice(0, 1)).toEqual([
      third,
    ]);
  });

  it("writes a page whose events of unknown types fill one of the rows Postgres writes it in", async () => {
    const app = newId();
    const unknown = (n: number) =>
      ({ ...sampleEvent("scan.completed", app, n), type: "scan.teleported" }) as unknown as NewEvent;
    const events = [
      sampleEvent("scan.completed", app, 0),
      ...Array.from({ length: 120 }, (_, n) => unknown(n + 1)),
      sampleEvent("scan.completed", app, 121),
    ];
    const ids = await logged(events, { oneTransaction: true });

    const filtered = await t.request("GET", `/events?applicationId=${app}&limit=122`);
    expect(filtered.text).toBe(JSON.stringify(filtered.body));
    expect(filtered.body.map((e: { id: string }) => e.id)).toEqual([ids[0], ids[121]]);
    const before = encodeEventCursor(decodeEventCursor(filtered.body[0].cursor)! - 1);
    const unfiltered = await t.request("GET", `/events?after=${before}&limit=122`);
    expect(unfiltered.text).toBe(JSON.stringify(unfiltered.body));
    expect(unfiltered.body.map((e: { id: string }) => e.id)).toEqual([ids[0], ids[121]]);
  });

  it("gives only the types the token may read, and refuses to be asked for others", async () => {
    const app = newId();
    await logged([
      sampleEvent("scan.completed", app, 0),
      sampleEvent("vulnerability.created", app, 1),
      sampleEvent("policy.violated", app, 2),
    ]);
    const scans = await t.token(["scans:read"]);
    const res = await t.request("GET", `/events?applicationId=${app}`, { token: scans });
    expect(res.body.map((e: { type: string }) => e.type)).toEqual(["scan.completed"]);
    const refused = await t.request("GET", `/events?types=scan.completed,vulnerability.created`, { token: scans });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("www-authenticate")).toBe(
      'Bearer error="insufficient_scope", scope="vulnerabilities:read"',
    );
    const none = await t.request("GET", "/events", { token: await t.token(["scans:write"]) });
    expect(none.status).toBe(403);
    expect(none.body.code).toBe("forbidden");
    expect((await t.request("GET", "/events", { token: null })).status).toBe(401);
  });

  it.each([
    ["limit=0", "limit"],
    ["limit=501", "limit"],
    ["types=scan.exploded", "types"],
    ["types=", "types"],
    ["types=scan.completed&types=scan.failed", "types"],
    ["applicationId=not-an-id", "applicationId"],
    ["after=nope", "after"],
    [`after=${Buffer.from([2, 0, 0, 0, 0, 0, 0, 0, 1]).toString("base64url")}`, "after"], // another version
    [`after=${Buffer.from([1, 0, 0, 0, 0, 0x0f, 0xff, 0xff, 0xff]).toString("base64url")}`, "after"], // beyond the log
  ])("answers %s with 400 naming %s", async (query, path) => {
    const res = await t.request("GET", `/events?${query}`);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/application\/problem\+json/);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
  });
});

describe("the GraphQL events query", () => {
  it("pages through the log as a connection, with the REST cursors", async () => {
    const app = newId();
    const ids = await logged(Array.from({ length: 5 }, (_, n) => sampleEvent("scan.completed", app, n)));
    const query = `query($app: ID, $after: String) { events(applicationId: $app, types: [SCAN_COMPLETED], first: 3, after: $after) {
      edges { cursor node { eventId eventType cursor data } } pageInfo { hasNextPage endCursor } } }`;
    const first = (await gql(t, query, { app })).body.data.events;
    expect(first.edges.map((e: { node: { eventId: string } }) => e.node.eventId)).toEqual(ids.slice(0, 3));
    expect(first.pageInfo.hasNextPage).toBe(true);
    for (const edge of first.edges) expect(edge.cursor).toBe(edge.node.cursor);
    const rest = (await t.request("GET", `/events?applicationId=${app}&limit=3`)).body;
    expect(first.edges.map((e: { cursor: string }) => e.cursor)).toEqual(rest.map((e: { cursor: string }) => e.cursor));

    const second = (await gql(t, query, { app, after: first.pageInfo.endCursor })).body.data.events;
    expect(second.edges.map((e: { node: { eventId: string } }) => e.node.eventId)).toEqual(ids.slice(3));
    expect(second.pageInfo.hasNextPage).toBe(false);
    const bad = await gql(t, "{ events(first: 0) { edges { cursor } } }");
    expect(bad.body.errors[0].extensions).toMatchObject({ code: "BAD_USER_INPUT", errors: [{ path: "first" }] });
  });
});

describe("retention", () => {
  it("deletes what is older than EVENT_RETENTION_DAYS in batches, keeps what a pending delivery needs, and sweeps it once it is done", async () => {
    const app = newId();
    const now = new Date();
    const webhook = await t.app.db.prisma.webhook.create({
      data: {
        id: newId(),
        name: "keeps",
        url: "https://hooks.example.com/h",
        events: ["policy.violated"],
        sealedSecret: t.app.webhookSecrets.seal("s", newId()),
        createdAt: now,
        updatedAt: now,
      },
    });
    const ids = await logged(
      [
        ...Array.from({ length: 1200 }, (_, n) => sampleEvent("scan.completed", app, n)),
        sampleEvent("policy.violated", app, 1200), // delivered to the webhook: pending
        sampleEvent("scan.completed", app, 1201),
      ],
      { oneTransaction: true },
    );
    while ((await dispatcher.runOnce()).fannedOut > 0); // a pass fans out 500 at a time
    const kept = ids[1200]!;
    const young = ids[1201]!;
    await t.app.db.pool.query("UPDATE events SET occurred_at = now() - interval '8 days' WHERE id <> $1", [young]);

    expect(await retention.runOnce()).toBeGreaterThanOrEqual(1200);
    const left = await t.app.db.prisma.event.findMany({ where: { applicationId: app }, select: { id: true } });
    expect(left.map((e) => e.id).sort()).toEqual([kept, young].sort());
    // The log reads on from the retention mark: the kept event is there for its delivery, not for readers.
    expect((await t.request("GET", `/events?applicationId=${app}`)).body.map((e: { id: string }) => e.id)).toEqual([
      young,
    ]);

    await t.app.db.prisma.webhookDelivery.updateMany({
      where: { webhookId: webhook.id },
      data: { status: "delivered" },
    });
    await retention.runOnce();
    expect(await t.app.db.prisma.event.count({ where: { id: kept } })).toBe(0);
    expect(await t.app.db.prisma.webhookDelivery.count({ where: { webhookId: webhook.id } })).toBe(0);
    await t.app.db.prisma.webhook.update({ where: { id: webhook.id }, data: { status: "disabled" } });
  });

  it("keeps the audit trail AUDIT_RETENTION_DAYS: behind the log's mark, read by its types alone from a mark of its own", async () => {
    const app = newId();
    const audit = (n: number): NewEvent => ({
      type: "application.updated",
      applicationId: app,
      data: { id: app, name: `app-${n}`, actor: { sub: "auditor" }, changed: ["name"] },
    });
    const [ancient, , recent, young] = await logged([
      audit(0),
      sampleEvent("scan.completed", app, 1),
      audit(2),
      sampleEvent("scan.completed", app, 3),
    ]);
    // The log is kept a suffix: everything before these must have expired too.
    await t.app.db.pool.query("UPDATE events SET occurred_at = now() - interval '8 days' WHERE id <> $1", [young]);
    await t.app.db.pool.query("UPDATE events SET occurred_at = now() - interval '31 days' WHERE id = $1", [ancient]);
    await retention.runOnce();

    const left = await t.app.db.prisma.event.findMany({ where: { applicationId: app }, select: { id: true } });
    expect(left.map((e) => e.id).sort()).toEqual([recent, young].sort());
    const ids = (res: { body: { id: string }[] }) => res.body.map((e) => e.id);
    expect(ids(await t.request("GET", `/events?applicationId=${app}`))).toEqual([young]);
    const auditOnly = `/events?applicationId=${app}&types=application.updated,policy.updated`;
    expect(ids(await t.request("GET", auditOnly))).toEqual([recent]);
    // A cursor from before the audit mark has expired for the audit trail too; one after it has not.
    const marks = await t.app.db.prisma.eventLogRetention.findFirstOrThrow();
    expect(marks.auditPrunedThrough).toBeLessThan(marks.prunedThrough);
    const before = encodeEventCursor(Number(marks.auditPrunedThrough) - 1);
    expect((await t.request("GET", `${auditOnly}&after=${before}`)).status).toBe(410);
    const after = encodeEventCursor(Number(marks.auditPrunedThrough));
    expect(ids(await t.request("GET", `${auditOnly}&after=${after}`))).toEqual([recent]);
    expect((await t.request("GET", `/events?after=${after}`)).status).toBe(410);

    // Once it expires in turn, the audit mark moves past it up to the log's.
    await t.app.db.pool.query("UPDATE events SET occurred_at = now() - interval '31 days' WHERE id = $1", [recent]);
    await retention.runOnce();
    expect(await t.app.db.prisma.event.count({ where: { id: recent } })).toBe(0);
    const moved = await t.app.db.prisma.eventLogRetention.findFirstOrThrow();
    expect(moved.auditPrunedThrough).toBe(moved.prunedThrough);
  });

  it("never waits on a row someone holds: it leaves it for a later round", async () => {
    const app = newId();
    const ids = await logged([sampleEvent("scan.completed", app, 0), sampleEvent("scan.completed", app, 1)]);
    // The log is kept a suffix: everything before these must have expired too.
    await t.app.db.pool.query("UPDATE events SET occurred_at = now() - interval '8 days'");
    // A writer inserting a delivery of the first event holds its row (key share) until it commits.
    const holder = new pg.Client({ connectionString: t.database.url });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM events WHERE id = $1 FOR KEY SHARE", [ids[0]]);
      const started = Date.now();
      await retention.runOnce();
      expect(Date.now() - started).toBeLessThan(2000);
      expect(
        (await t.app.db.prisma.event.findMany({ where: { applicationId: app }, select: { id: true } })).map(
          (e) => e.id,
        ),
      ).toEqual([ids[0]]);
    } finally {
      await holder.query("ROLLBACK");
      await holder.end();
    }
    await retention.runOnce();
    expect(await t.app.db.prisma.event.count({ where: { applicationId: app } })).toBe(0);
  });
});
