// The shared LISTEN helper and the workers built on it: a lost connection comes back by itself,
// close() leaves nothing behind, and a failed event load is not mistaken for a lost connection.
import { jest } from "@jest/globals";
import pg from "pg";
import { openDatabase, type Database } from "../../src/db/client.ts";
import { listen } from "../../src/db/listen.ts";
import { createPool } from "../../src/db/pool-mode.ts";
import { sharedListener } from "../../src/db/shared-listener.ts";
import { createDispatcher } from "../../src/dispatcher/dispatcher.ts";
import { fanOutEvents } from "../../src/dispatcher/fan-out.ts";
import type { EventEnvelope } from "../../src/events/catalog.ts";
import { EVENTS_CHANNEL, recordEvent } from "../../src/events/outbox.ts";
import { createEventFeed } from "../../src/events/event-feed.ts";
import { EVENT_LOG_CHANNEL } from "../../src/events/event-log.ts";
import { newId } from "../../src/ids.ts";
import { createLogger } from "../../src/log.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { eventually } from "../helpers/scan-engines.ts";
import { testSecretBox } from "../helpers/test-app.ts";

let database: TestDatabase;
let db: Database;
/** For the tests' own queries; it sets no idle timers, which would be counted with the code's. */
let admin: pg.Pool;
beforeAll(async () => {
  database = await createTestDatabase();
  db = openDatabase(database.url, database.options);
  admin = new pg.Pool({ connectionString: database.url, idleTimeoutMillis: 0 });
});
afterAll(async () => {
  await admin.end();
  await db.close();
  await database.drop();
});

const quietLog = () => createLogger("silent");
const listeners = async (channel = EVENTS_CHANNEL) =>
  Number(
    (
      await admin.query<{ n: string }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE $1",
        [`LISTEN ${channel}%`],
      )
    ).rows[0]!.n,
  );
const terminateListeners = () =>
  admin.query(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'",
  );
const notify = (channel: string, payload: string) => admin.query("SELECT pg_notify($1, $2)", [channel, payload]);
/** Timers the code under test sets from now on that are neither fired nor cleared (jest's own are not counted). */
function trackTimers(): { pending(): number; restore(): void } {
  const live = new Set<unknown>();
  const realSet = globalThis.setTimeout;
  const realClear = globalThis.clearTimeout;
  const set = jest.spyOn(globalThis, "setTimeout").mockImplementation(((
    fn: (...args: unknown[]) => void,
    ms?: number,
    ...args: unknown[]
  ) => {
    const handle = realSet(() => {
      live.delete(handle);
      fn(...args);
    }, ms);
    live.add(handle);
    return handle;
  }) as typeof setTimeout);
  const clear = jest.spyOn(globalThis, "clearTimeout").mockImplementation((handle) => {
    live.delete(handle);
    realClear(handle);
  });
  return {
    pending: () => live.size,
    restore: () => (set.mockRestore(), clear.mockRestore()),
  };
}

describe("listen()", () => {
  it("reconnects after its connection is terminated and hears notifications again", async () => {
    const pool = new pg.Pool({ connectionString: database.directUrl }); // LISTEN lasts the session
    const heard: string[] = [];
    const l = listen(pool, ["test_wake"], (msg) => heard.push(msg.payload ?? ""), { log: quietLog(), retryMs: 50 });
    try {
      await l.ready;
      await notify("test_wake", "before");
      await eventually(async () => heard.includes("before"));
      await terminateListeners();
      // Keep notifying until one is heard by the new connection.
      let n = 0;
      await eventually(async () => {
        await notify("test_wake", `after-${++n}`);
        return heard.some((p) => p.startsWith("after-"));
      });
      expect(await listeners("test_wake")).toBe(1);
    } finally {
      await l.close();
      await pool.end();
    }
  });

  it("close() ends the connection and a pending reconnect: no LISTEN connection, no timer left", async () => {
    const pool = new pg.Pool({ connectionString: database.directUrl }); // LISTEN lasts the session
    const log = quietLog();
    const warn = jest.spyOn(log, "warn");
    const timers = trackTimers();
    const l = listen(pool, ["test_close"], () => {}, { log, retryMs: 60_000 });
    await l.ready;
    expect(await listeners("test_close")).toBe(1);
    await terminateListeners();
    await eventually(async () => warn.mock.calls.length > 0); // lost: a reconnect is now scheduled
    await l.close();
    await pool.end(); // resolves only once every client is gone
    timers.restore();
    expect(timers.pending()).toBe(0);
    expect(await listeners("test_close")).toBe(0);
  });

  it("keeps retrying while LISTEN fails, rejecting only `ready`, and leaves no connection open", async () => {
    const pool = new pg.Pool({ connectionString: database.directUrl }); // LISTEN lasts the session
    const log = quietLog();
    const warn = jest.spyOn(log, "warn");
    const l = listen(pool, ["not a channel"], () => {}, { log, retryMs: 10 });
    await expect(l.ready).rejects.toThrow(/syntax error/);
    await eventually(async () => warn.mock.calls.length >= 3);
    await l.close();
    expect(pool.totalCount).toBe(0);
    await pool.end();
  });

  it("close() during the first connection attempt closes that connection as it opens", async () => {
    const pool = new pg.Pool({ connectionString: database.directUrl }); // LISTEN lasts the session
    const l = listen(pool, ["test_early"], () => {}, { log: quietLog() });
    await l.close();
    await pool.end();
    expect(await listeners("test_early")).toBe(0);
  });
});

describe("sharedListener()", () => {
  it("listens for all its listeners on one connection; one bringing a channel has it opened again, and each catches up", async () => {
    const log = quietLog();
    const shared = sharedListener(database.directUrl, { log, retryMs: 50 });
    const heard: Record<string, string[]> = { a: [], b: [] };
    const caughtUp = { a: 0, b: 0 };
    const a = listen(shared, ["test_shared_a"], (msg) => heard.a!.push(msg.payload!), {
      log,
      onListening: () => caughtUp.a++,
    });
    try {
      await a.ready;
      await notify("test_shared_a", "1");
      await eventually(async () => heard.a!.includes("1"));
      const b = listen(shared, ["test_shared_b", "test_shared_a"], (msg) => heard.b!.push(msg.payload!), {
        log,
        onListening: () => caughtUp.b++,
      });
      await b.ready;
      // Reopened with both channels: both listeners were told to catch up.
      await eventually(async () => caughtUp.a === 2 && caughtUp.b === 1);
      await notify("test_shared_a", "2");
      await notify("test_shared_b", "3");
      await eventually(async () => heard.a!.includes("2") && heard.b!.includes("2") && heard.b!.includes("3"));
      expect(heard.a).toEqual(["1", "2"]);
      // One connection, listening on both channels.
      const { rows } = await admin.query<{ query: string }>(
        "SELECT query FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN test_shared%'",
      );
      expect(
        rows.map((r) =>
          r.query
            .split(";")
            .map((q) => q.trim())
            .sort(),
        ),
      ).toEqual([["LISTEN test_shared_a", "LISTEN test_shared_b"]]);

      // Lost: it comes back by itself, and everyone catches up again.
      await terminateListeners();
      await eventually(async () => caughtUp.a === 3 && caughtUp.b === 2);
      await b.close();
      expect(await listeners("test_shared")).toBe(1); // a still listens
    } finally {
      await a.close();
    }
    expect(await listeners("test_shared")).toBe(0); // the last one gone: the connection is closed
    await shared.close();
  });

  it("tells a listener that joins while its connection is away, at once", async () => {
    const log = quietLog();
    const shared = sharedListener("postgres://postgres@127.0.0.1:1/nowhere", { log, retryMs: 60_000 });
    const first = listen(shared, ["test_away"], () => {}, { log });
    await expect(first.ready).rejects.toThrow();
    const second = listen(shared, ["test_away"], () => {}, { log });
    await expect(second.ready).rejects.toThrow();
    await shared.close();
  });
});

describe("the webhook dispatcher", () => {
  it("stop() after a lost LISTEN connection leaves no reconnect timer behind", async () => {
    const own = openDatabase(database.url, database.options);
    const log = quietLog();
    const warn = jest.spyOn(log, "warn");
    const timers = trackTimers();
    const d = createDispatcher({
      db: own,
      config: {
        WEBHOOK_ALLOW_PRIVATE_TARGETS: false,
        WEBHOOK_TIMEOUT_MS: 1000,
        WEBHOOK_RETRY_INITIAL_MS: 1000,
        WEBHOOK_RETRY_MAX_DELAY_MS: 1000,
        WEBHOOK_RETRY_WINDOW_MS: 1000,
        WEBHOOK_CONCURRENCY: 4,
        WEBHOOK_ENDPOINT_CONCURRENCY: 4,
        WEBHOOK_ENDPOINT_MIN_CONCURRENCY: 1,
      },
      log,
      metrics: { webhookDeliveries: { inc: () => {} }, webhookAttemptDuration: { observe: () => {} } } as never,
      webhookSecrets: testSecretBox(),
      pollIntervalMs: 60_000,
    });
    d.start();
    await eventually(async () => (await listeners("")) === 1);
    await terminateListeners();
    await eventually(async () => warn.mock.calls.length > 0);
    await d.stop();
    await own.close();
    timers.restore();
    expect(timers.pending()).toBe(0);
  });
});

describe("the Postgres event source", () => {
  it("a failed read of the log is retried, not taken for a lost connection: one LISTEN, each event once", async () => {
    // The bus reads the log through `pool`, and LISTENs on a session of its own.
    const pool = createPool({ connectionString: database.url }, database.options.poolMode ?? "session");
    const log = quietLog();
    const bus = createEventFeed({ listenOn: database.directUrl, pool, log }).bus;
    const applicationId = newId();
    const seen: EventEnvelope[][] = [[], []];
    const consume = async (into: EventEnvelope[]) => {
      const iterator = (
        await bus.subscribe((e) => (e.data as { applicationId?: string }).applicationId === applicationId)
      )[Symbol.asyncIterator]();
      void (async () => {
        for (let next = await iterator.next(); !next.done; next = await iterator.next()) into.push(next.value);
      })();
      return iterator;
    };
    // Committed, then numbered into the log (fanned out), which is what the bus hears of.
    const commit = async () => {
      const id = await db.prisma.$transaction((tx) =>
        recordEvent(tx, "vulnerability.created", {
          id: newId(),
          severity: "high",
          applicationId,
          title: "x",
          createdAt: new Date().toISOString(),
        }),
      );
      await fanOutEvents(db.queuePool, 500);
      return id;
    };
    const first = await consume(seen[0]!);
    try {
      await bus.listening();
      const query = jest.spyOn(pool, "query") as unknown as jest.SpiedFunction<() => Promise<unknown>>;
      query.mockRejectedValueOnce(new Error("load failed"));
      const failed = await commit();
      await eventually(async () => seen[0]!.some((e) => e.eventId === failed));

      // A second subscriber asks the bus to listen again; a bus that thought the source lost opens a second connection.
      const second = await consume(seen[1]!);
      await bus.listening();
      const later = [await commit(), await commit()];
      await eventually(async () => seen.every((s) => later.every((id) => s.some((e) => e.eventId === id))));
      for (const s of seen)
        for (const id of [failed, ...later])
          expect(s.filter((e) => e.eventId === id)).toHaveLength(id === failed && s === seen[1] ? 0 : 1);
      expect(await listeners(EVENT_LOG_CHANNEL)).toBe(1);
      void second.return?.();
    } finally {
      void first.return?.();
      await bus.close();
      await pool.end();
    }
  });
});
