// Events and the teams that see them (docs/spec/CONTRACT.md §17): each event is written with its
// application's owner's team, read in the statement that writes it; the event log, every graphql-ws
// subscription (live and replayed), SSE and the webhooks give a confined token only its teams'
// events; and an application moved between teams while its events are written gives each event to
// exactly one of them, the one that owned it when the event committed.
import type { Client } from "graphql-ws";
import pg from "pg";
import type { WebhookDispatcher } from "../../src/dispatcher/dispatcher.ts";
import { eventVisibleTo, type EventAudience, type ViewerTeams } from "../../src/domain/access/viewer.ts";
import { AUDIT_EVENT_TYPES, EVENT_READ_SCOPE, EVENT_TYPES } from "../../src/events/catalog.ts";

/** The events of scans and findings these tests follow: the audit trail's (the set-up's own changes) aside. */
const DATA_EVENT_TYPES = EVENT_TYPES.filter((type) => !(AUDIT_EVENT_TYPES as readonly string[]).includes(type));
import { recordEvents, type NewEvent } from "../../src/events/outbox.ts";
import { newId } from "../../src/ids.ts";
import { gql, wsClient } from "../helpers/graphql.ts";
import { startHttpsReceiver, type HttpsReceiver } from "../helpers/https-receiver.ts";
import { sampleEvent } from "../helpers/sample-events.ts";
import { sarifLog } from "../helpers/scanner-reports.ts";
import { createSelfSignedCert, type SelfSignedCert } from "../helpers/self-signed-cert.ts";
import { openSse, type SseStream } from "../helpers/sse.ts";
import { dispatcherTrusting, startTestApp, type TestApp } from "../helpers/test-app.ts";
import { cyclonedxReport, openVex, statement } from "../helpers/vex-documents.ts";

let t: TestApp;
let cert: SelfSignedCert;
let receiver: HttpsReceiver;
let dispatcher: WebhookDispatcher;
const clients: Client[] = [];
const streams: SseStream[] = [];

beforeAll(async () => {
  cert = createSelfSignedCert();
  t = await startTestApp({ AUTH_TEAMS_CLAIM: "teams", WEBHOOK_ALLOW_PRIVATE_TARGETS: "true", SCAN_DURATION_MS: "0" });
  receiver = await startHttpsReceiver(cert);
  // Fans out (numbering events into the log, which wakes the live subscriptions) and delivers.
  dispatcher = dispatcherTrusting(t, cert.cert, { pollIntervalMs: 50 });
  dispatcher.start();
});
afterAll(async () => {
  for (const s of streams) s.abort();
  await Promise.all(clients.map((c) => c.dispose()));
  await dispatcher.stop();
  await receiver.close();
  await t.close();
  cert.remove();
});

/** Every read scope of an event type, and the webhooks': a team member's token, without admin (which is org-wide). */
const MEMBER_SCOPES = [...new Set(Object.values(EVENT_READ_SCOPE)), "webhooks:read", "webhooks:write"];
const member = (sub: string, ...teams: string[]) => t.token(MEMBER_SCOPES, sub, teams);

let n = 0;
async function newApplication(owner: string | null): Promise<string> {
  const res = await t.request("POST", "/applications", { body: { name: `team-events-${++n}`, owner } });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

/** A SARIF report with findings `numbers` for the application: a completed scan and its vulnerabilities' events. */
async function upload(app: string, numbers: number[]): Promise<void> {
  const res = await t.request("POST", `/applications/${app}/scan-reports`, {
    rawBody: JSON.stringify(sarifLog([{ findings: numbers }])),
    headers: { "content-type": "application/sarif+json" },
  });
  expect(res.status).toBe(202);
}

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const commit = (events: NewEvent[]) => t.app.db.prisma.$transaction((tx) => recordEvents(tx, events));

/** The events whose stored teams include `team`, in log order (once fanned out). */
async function eventsOfTeam(team: string): Promise<string[]> {
  const { rows } = await t.app.db.pool.query<{ id: string }>(
    "SELECT id::text FROM events WHERE teams && ARRAY[$1]::text[] AND position IS NOT NULL AND type = ANY($2) ORDER BY position",
    [team, DATA_EVENT_TYPES],
  );
  return rows.map((r) => r.id);
}

async function everythingFannedOut(): Promise<void> {
  await until(
    async () => (await t.app.db.pool.query("SELECT 1 FROM events WHERE position IS NULL LIMIT 1")).rowCount === 0,
    "every event fanned out",
  );
}

/** GET /events after `after` as `token`, page by page (Link rel=next); the events' ids in order. */
interface LogEntry {
  id: string;
  type: string;
  data: { applicationId?: string };
}

async function readLog(token: string, query = ""): Promise<LogEntry[]> {
  const read: LogEntry[] = [];
  let path: string | undefined = `/events?limit=7${query}`;
  while (path) {
    const res = await t.request("GET", path, { token });
    expect(res.status).toBe(200);
    read.push(...res.body);
    const next = /<([^>]+)>; rel="next"/.exec(res.headers.get("link") ?? "")?.[1];
    path = next && next.slice(t.baseUrl.length);
  }
  return read;
}

const idsAt = (path: string) =>
  receiver.requests.filter((r) => r.path === path).map((r) => JSON.parse(r.rawBody.toString()).eventId as string);

async function createHook(token: string, path: string, teams?: string[]): Promise<string> {
  const res = await t.request("POST", "/webhooks", {
    token,
    body: { name: `hook${path}`, url: receiver.url(path), events: DATA_EVENT_TYPES, secret: "hook-secret", teams },
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

interface Next {
  data?: Record<string, any>;
  errors?: unknown[];
}

function subscribe(client: Client, query: string, variables?: Record<string, unknown>): Next[] {
  const results: Next[] = [];
  client.subscribe({ query, variables }, { next: (v) => results.push(v as Next), error: () => {}, complete: () => {} });
  return results;
}

async function socket(token: string): Promise<Client> {
  const client = wsClient(t, { authorization: `Bearer ${token}` });
  clients.push(client);
  return client;
}

const headCursor = async () => (await gql(t, "{ eventLogHead }")).body.data.eventLogHead as string;

describe("writing", () => {
  it("writes each event with its audience: its application's owner, an explicit one, or org-wide tokens only", async () => {
    const owned = await newApplication("green");
    const ownerless = await newApplication(null);
    const missing = newId(); // no such application
    // 2,500 events: three INSERTs, each reading the owners of its two applications once.
    const many = Array.from({ length: 2_500 }, (_, i) => sampleEvent("scan.completed", i % 2 ? owned : ownerless, i));
    const explicit: EventAudience = { teams: ["x", "y"], teamsAll: true };
    const others: NewEvent[] = [
      sampleEvent("scan.completed", missing, 0),
      { ...sampleEvent("policy.violated", owned, 1), audience: explicit },
      { ...sampleEvent("scan.completed", owned, 2), audience: { teams: null, teamsAll: false } },
      { type: "scan.completed", data: sampleEvent("scan.completed", missing, 3).data },
    ];
    const ids = await commit([...many, ...others]);

    const { rows } = await t.app.db.pool.query<{ id: string; teams: string[] | null; teams_all: boolean }>(
      "SELECT id::text, teams, teams_all FROM events WHERE id = ANY ($1::uuid[])",
      [ids],
    );
    const stored = new Map(rows.map((r) => [r.id, { teams: r.teams, teamsAll: r.teams_all }]));
    const expected: EventAudience[] = [
      ...many.map((e) => ({ teams: e.applicationId === owned ? ["green"] : null, teamsAll: false })),
      { teams: null, teamsAll: false },
      explicit,
      { teams: null, teamsAll: false },
      { teams: null, teamsAll: false },
    ];
    expect(ids.map((id) => stored.get(id))).toEqual(expected);
  });

  it("writes a triage decision's vulnerability.updated with the application's owner", async () => {
    const app = await newApplication("green");
    const report = cyclonedxReport([{ id: "CVE-2021-23337", purl: "pkg:npm/lodash@4.17.20" }]);
    const scanned = await t.request("POST", `/applications/${app}/scan-reports`, {
      rawBody: JSON.stringify(report),
      headers: { "content-type": "application/json" },
    });
    expect(scanned.status).toBe(202);
    const applied = await t.request("POST", `/applications/${app}/vex`, {
      body: openVex([statement("CVE-2021-23337", "not_affected")]),
    });
    expect(applied.status).toBe(200);
    const { rows } = await t.app.db.pool.query(
      "SELECT type, teams, teams_all FROM events WHERE application_id = $1 ORDER BY occurred_at, id",
      [app],
    );
    expect(rows.map((r) => r.type)).toContain("vulnerability.updated");
    expect(rows.every((r) => JSON.stringify([r.teams, r.teams_all]) === JSON.stringify([["green"], false]))).toBe(true);
  });

  it("tests an audience in SQL (visible_to) as eventVisibleTo does, for every audience and viewer over three teams", async () => {
    const subsets = [[], ["a"], ["b"], ["c"], ["a", "b"], ["a", "c"], ["b", "c"], ["a", "b", "c"]];
    const audiences: EventAudience[] = [null, ...subsets].flatMap((teams) => [
      { teams, teamsAll: false },
      { teams, teamsAll: true },
    ]);
    const viewers: ViewerTeams[] = [null, ...subsets];
    const cases = audiences.flatMap((audience) => viewers.map((viewer) => ({ audience, viewer })));
    const { rows } = await t.app.db.pool.query<{ visible: boolean[] }>(
      `SELECT array_agg(visible_to(CASE WHEN json_typeof(c->'teams') = 'null' THEN NULL ELSE ARRAY(SELECT json_array_elements_text(c->'teams')) END,
                                   (c->>'teamsAll')::boolean,
                                   CASE WHEN json_typeof(c->'viewer') = 'null' THEN NULL ELSE ARRAY(SELECT json_array_elements_text(c->'viewer')) END)
                        ORDER BY i) AS visible
         FROM json_array_elements($1::json) WITH ORDINALITY AS x(c, i)`,
      [JSON.stringify(cases.map(({ audience, viewer }) => ({ ...audience, viewer })))],
    );
    expect(rows[0]!.visible).toEqual(cases.map(({ audience, viewer }) => eventVisibleTo(audience, viewer)));
  });
});

describe("reading and receiving", () => {
  it("gives a team only its applications' events, live, replayed, logged and delivered; an org-wide token all of them", async () => {
    const [red, blue] = [await member("rita", "red"), await member("bob", "blue")];
    const org = await t.token();
    const [redApp, blueApp] = [await newApplication("red"), await newApplication("blue")];
    await createHook(red, "/red");
    await createHook(blue, "/blue");
    await createHook(org, "/everyone");
    await everythingFannedOut(); // the set-up's own changes (the audit trail's) are before the start
    const start = await headCursor();

    const blueSocket = await socket(blue);
    const blueEvents = subscribe(blueSocket, "subscription { events { eventId data } }");
    const blueScans = subscribe(blueSocket, "subscription { scanCompleted { id applicationId } }");
    const blueVulnerabilities = subscribe(blueSocket, "subscription { vulnerabilityCreated { id applicationId } }");
    const redEvents = subscribe(await socket(red), "subscription { events { eventId data } }");
    const orgEvents = subscribe(await socket(org), "subscription { events { eventId data } }");
    const blueSse: { scanUpdated: { id: string; applicationId: string } }[] = [];
    streams.push(
      await openSse(
        t.baseUrl,
        { query: "subscription { scanUpdated { id applicationId } }", token: blue },
        (e) => e.event === "next" && blueSse.push(JSON.parse(e.data).data),
      ),
    );

    // Subscriptions register asynchronously: blue's events until each of its streams has one, then
    // red's until red's has one (blue's, seeing nothing of red's meanwhile, are live by then).
    const eventIdsOf = (results: Next[]) => results.map((r) => r.data?.events?.eventId as string);
    const blueLive = () =>
      blueEvents.length > 0 && blueScans.length > 0 && blueVulnerabilities.length > 0 && blueSse.length > 0;
    for (let i = 0; !blueLive(); i++) {
      expect(i).toBeLessThan(100);
      await commit([sampleEvent("scan.completed", blueApp, i), sampleEvent("vulnerability.created", blueApp, i)]);
      await until(blueLive, "blue's subscriptions live", 500).catch(() => {});
    }
    for (let i = 0; redEvents.length === 0; i++) {
      expect(i).toBeLessThan(100);
      await commit([sampleEvent("scan.completed", redApp, i)]);
      await until(() => redEvents.length > 0, "red's first event", 500).catch(() => {});
    }

    await upload(redApp, [1, 2, 3]);
    await upload(redApp, [1, 4]); // 2 and 3 resolved
    await upload(blueApp, [5, 6]);
    await upload(redApp, [7]);
    await upload(blueApp, [5]); // the last: blue's streams hold everything before it once they have it
    await everythingFannedOut();
    const [redIds, blueIds] = [await eventsOfTeam("red"), await eventsOfTeam("blue")];
    const lastBlue = blueIds.at(-1)!;
    await until(() => eventIdsOf(orgEvents).includes(lastBlue), "the org-wide subscriber has every event");
    await until(() => eventIdsOf(blueEvents).includes(lastBlue), "blue's subscriber has its last event");
    await until(() => eventIdsOf(redEvents).includes(redIds.at(-1)!), "red's subscriber has its last event");

    // Live: blue's subscriptions have none of red's events, and every one of its own since they started.
    const appsOf = (values: { applicationId?: string }[]) => new Set(values.map((v) => v.applicationId));
    expect(eventIdsOf(blueEvents).filter((id) => redIds.includes(id))).toEqual([]);
    expect(eventIdsOf(blueEvents)).toEqual(blueIds.slice(blueIds.indexOf(eventIdsOf(blueEvents)[0]!)));
    expect(eventIdsOf(redEvents)).toEqual(redIds.slice(redIds.indexOf(eventIdsOf(redEvents)[0]!)));
    expect(appsOf(blueScans.map((r) => r.data!.scanCompleted))).toEqual(new Set([blueApp]));
    expect(appsOf(blueVulnerabilities.map((r) => r.data!.vulnerabilityCreated))).toEqual(new Set([blueApp]));
    await until(() => blueSse.length >= blueScans.length, "blue's SSE stream has its scans");
    expect(appsOf(blueSse.map((r) => r.scanUpdated))).toEqual(new Set([blueApp]));
    const everyone = eventIdsOf(orgEvents);
    expect(redIds.slice(-5).every((id) => everyone.includes(id))).toBe(true);
    expect(blueIds.slice(-5).every((id) => everyone.includes(id))).toBe(true);

    // Replayed after a cursor: exactly blue's events, in order, then live.
    const replay = subscribe(await socket(blue), "subscription($after: String) { events(after: $after) { eventId } }", {
      after: start,
    });
    await until(() => eventIdsOf(replay).includes(lastBlue), "blue's replay reaches its last event");
    expect(eventIdsOf(replay)).toEqual(blueIds);

    // The log: blue's pages hold blue's events, red's red's, an org-wide token's both.
    expect((await readLog(blue, `&after=${start}`)).map((e) => e.id)).toEqual(blueIds);
    expect((await readLog(red, `&after=${start}`)).map((e) => e.id)).toEqual(redIds);
    const all = (await readLog(org, `&after=${start}`)).map((e) => e.id);
    expect(all.filter((id) => redIds.includes(id) || blueIds.includes(id)).sort()).toEqual(
      [...redIds, ...blueIds].sort(),
    );
    // Naming red's application, blue reads nothing; a token with no team nothing at all.
    expect(await readLog(blue, `&applicationId=${redApp}`)).toEqual([]);
    expect((await readLog(blue, `&applicationId=${blueApp}&after=${start}`)).map((e) => e.id)).toEqual(blueIds);
    expect(await readLog(await member("nobody"), `&after=${start}`)).toEqual([]);
    const page = await gql(
      t,
      `query($after: String) { events(after: $after, first: 500) { edges { node { eventId } } } }`,
      {
        after: start,
      },
      { token: blue },
    );
    expect(page.body.data.events.edges.map((e: { node: { eventId: string } }) => e.node.eventId)).toEqual(blueIds);

    // Webhooks: each team's subscription receives its events only; the organisation's every one.
    await receiver.waitFor(() => [...redIds, ...blueIds].every((id) => idsAt("/everyone").includes(id)), 15_000);
    await receiver.waitFor(() => blueIds.every((id) => idsAt("/blue").includes(id)), 15_000);
    await receiver.waitFor(() => redIds.every((id) => idsAt("/red").includes(id)), 15_000);
    expect(new Set(idsAt("/blue"))).toEqual(new Set(blueIds));
    expect(new Set(idsAt("/red"))).toEqual(new Set(redIds));
  });
});

describe("an application moved between teams", () => {
  /** Resolves once a backend of this database waits for a lock in a statement LIKE `%text%`. */
  const waitingOnLock = (text: string) =>
    until(
      async () =>
        (
          await t.app.db.pool.query(
            `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`,
            [`%${text}%`],
          )
        ).rowCount! > 0,
      `a statement with ${text} waiting for a lock`,
    );

  const teamsOf = async (ids: string[]) =>
    (await t.app.db.pool.query("SELECT teams FROM events WHERE id = ANY ($1::uuid[])", [ids])).rows.map((r) => r.teams);

  it("serialises an owner change with the events being written: each goes to the owner at its commit", async () => {
    const app = await newApplication("north");

    // An owner change in flight (not committed): the event waits for it, then reads the new owner.
    const mover = new pg.Client({ connectionString: t.database.url });
    await mover.connect();
    try {
      await mover.query("BEGIN");
      await mover.query("UPDATE applications SET owner = 'south' WHERE id = $1", [app]);
      const writing = commit([sampleEvent("scan.completed", app, 0)]);
      await waitingOnLock("INSERT INTO events");
      await mover.query("COMMIT");
      expect(await teamsOf(await writing)).toEqual([["south"]]);
    } finally {
      await mover.end();
    }

    // Events written, not committed: the owner change (PUT, as an admin does it) waits for their commit.
    let moved: Promise<{ status: number }> | undefined;
    const ids = await t.app.db.prisma.$transaction(async (tx) => {
      const written = await recordEvents(tx, [sampleEvent("scan.completed", app, 1)]);
      moved = t.request("PUT", `/applications/${app}`, { body: { owner: "north" } });
      await waitingOnLock("FROM applications%FOR UPDATE");
      return [...written, ...(await recordEvents(tx, [sampleEvent("scan.completed", app, 2)]))];
    });
    expect((await moved!).status).toBe(200);
    expect(await teamsOf(ids)).toEqual([["south"], ["south"]]);
  });

  it("gives each event written while it moves to exactly one team, the one that owned it at commit", async () => {
    const [north, south] = [await member("nora", "north"), await member("sam", "south")];
    const app = await newApplication("north");
    const hooks = { north: await createHook(north, "/north"), south: await createHook(south, "/south") };
    await everythingFannedOut(); // the set-up's own changes (the audit trail's) are before the start
    const start = await headCursor();

    // Writers: transactions of three INSERTs each, one after the other on each of four connections,
    // and report uploads, while the owner changes once.
    interface Written {
      ids: string[];
      began: number;
      committed: number;
    }
    const written: Written[] = [];
    let stop = false;
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const began = performance.now();
        const ids = await t.app.db.prisma.$transaction(async (tx) => {
          const all: string[] = [];
          for (let k = 0; k < 3; k++) all.push(...(await recordEvents(tx, [sampleEvent("scan.completed", app, i)])));
          return all;
        });
        written.push({ ids, began, committed: performance.now() });
        if (w === 0 && i % 5 === 0) await upload(app, [100 + i]);
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    await until(() => written.length >= 20, "transactions committed before the move");
    const sent = performance.now();
    const res = await t.request("PUT", `/applications/${app}`, { body: { owner: "south" } });
    expect(res.status).toBe(200);
    const answered = performance.now();
    await until(() => written.filter((w) => w.began > answered).length >= 20, "transactions begun after the move");
    stop = true;
    await Promise.all(writers);
    await everythingFannedOut();

    // The move itself (application.updated, the audit trail's) goes to both teams; every other event
    // to exactly one.
    const { rows } = await t.app.db.pool.query<{ id: string; type: string }>(
      "SELECT id::text, type FROM events WHERE application_id = $1 ORDER BY position",
      [app],
    );
    const isMove = (e: { type: string }) => e.type === "application.updated";
    const every = rows.filter((e) => !e.type.startsWith("application.")).map((r) => r.id);
    const move = rows.filter(isMove).map((r) => r.id);
    expect(move).toHaveLength(1);
    const [northLog, southLog] = [await readLog(north, `&after=${start}`), await readLog(south, `&after=${start}`)];
    for (const log of [northLog, southLog]) expect(log.filter(isMove).map((e) => e.id)).toEqual(move);
    const northRead = northLog.filter((e) => !e.type.startsWith("application.")).map((e) => e.id);
    const southRead = southLog.filter((e) => !e.type.startsWith("application.")).map((e) => e.id);
    // Exactly one team each, none lost.
    expect(northRead.filter((id) => southRead.includes(id))).toEqual([]);
    expect([...northRead, ...southRead].sort()).toEqual([...every].sort());
    expect(northRead.length).toBeGreaterThan(0);
    expect(southRead.length).toBeGreaterThan(0);

    // The owner at commit: a transaction committed before the change was sent is north's, one begun
    // after it was answered south's, and no transaction is split between them.
    const teamOf = (id: string) => (northRead.includes(id) ? "north" : "south");
    for (const w of written) {
      const teams = new Set(w.ids.map(teamOf));
      expect(teams.size).toBe(1);
      if (w.committed < sent) expect(teams).toEqual(new Set(["north"]));
      if (w.began > answered) expect(teams).toEqual(new Set(["south"]));
    }
    expect(written.some((w) => w.committed < sent)).toBe(true);

    // The webhooks: the same split, each delivered once.
    await receiver.waitFor(() => idsAt("/north").length + idsAt("/south").length >= every.length, 20_000);
    expect(new Set(idsAt("/north"))).toEqual(new Set(northRead));
    expect(new Set(idsAt("/south"))).toEqual(new Set(southRead));
    const { rows: deliveries } = await t.app.db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = ANY ($1::uuid[])",
      [[hooks.north, hooks.south]],
    );
    expect(deliveries[0]!.n).toBe(every.length);
  });
});
