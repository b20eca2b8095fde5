// Several instances of the service on one database: live events reach subscribers on every
// instance (Postgres LISTEN by default, Redis when REDIS_URL is set), only committed events travel,
// each once; with Redis the instances also share each caller's rate-limit budget.
import { Redis } from "ioredis";
import { DISPATCHER_NAME, type WebhookDispatcher } from "../../src/dispatcher/dispatcher.ts";
import type { LoggedEvent } from "../../src/events/event-log.ts";
import { recordEvent, recordEvents } from "../../src/events/outbox.ts";
import { REDIS_EVENTS_CHANNEL } from "../../src/events/redis-event-source.ts";
import { newId } from "../../src/ids.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

// Another test run may share the Redis server: this run's events are the ones about this application.
const APPLICATION_ID = newId();
const vulnerability = () => ({
  id: newId(),
  severity: "high",
  applicationId: APPLICATION_ID,
  title: "SQL injection",
  createdAt: new Date().toISOString(),
});

/** Collects what a subscriber on `app` receives. */
async function collect(app: TestApp): Promise<{ events: LoggedEvent[]; stop(): void }> {
  const events: LoggedEvent[] = [];
  const iterator = await app.app.events.subscribe(
    (e) => (e.data as { applicationId?: string }).applicationId === APPLICATION_ID,
  );
  let running = true;
  void (async () => {
    while (running) {
      const next = await iterator.next();
      if (next.done) return;
      events.push(next.value);
    }
  })();
  return { events, stop: () => ((running = false), void iterator.return?.()) };
}

async function until(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

const commit = (t: TestApp) =>
  t.app.db.prisma.$transaction((tx) => recordEvent(tx, "vulnerability.created", vulnerability()));
const rollBack = (t: TestApp) =>
  t.app.db.prisma
    .$transaction(async (tx) => {
      await recordEvent(tx, "vulnerability.created", { ...vulnerability(), title: "rolled back" });
      throw new Error("the change fails");
    })
    .catch(() => undefined);
const dispatcherOf = (t: TestApp) => t.app.workers.find((w) => w.name === DISPATCHER_NAME) as WebhookDispatcher;

describe("through Postgres LISTEN (default)", () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await startTestApp();
    // b's dispatcher fans out (numbers into the event log) what is committed; a hears of it.
    b = await startTestApp({}, { database: a.database, workers: [DISPATCHER_NAME] });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it("delivers an event committed on another instance, once, and never a rolled-back one", async () => {
    const seen = await collect(a);
    await a.app.events.listening();
    await rollBack(b);
    const eventId = await commit(b);
    await until(() => seen.events.some((e) => e.eventId === eventId));
    await new Promise((r) => setTimeout(r, 100));
    seen.stop();
    expect(seen.events).toHaveLength(1);
    expect(seen.events[0]).toMatchObject({
      eventId,
      eventType: "vulnerability.created",
      data: { title: "SQL injection" },
    });
  });

  it("ends a subscription at once when its consumer returns, with no event flowing", async () => {
    const iterator = await a.app.events.subscribe(() => false);
    const pending = iterator.next(); // a consumer waiting for the next event, as every subscriber is
    const started = Date.now();
    const ended = await Promise.race([
      iterator.return!().then(() => "ended"),
      new Promise((r) => setTimeout(r, 200, "still waiting")),
    ]);
    expect(ended).toBe("ended");
    expect(Date.now() - started).toBeLessThan(200);
    await expect(pending).resolves.toMatchObject({ done: true });
  });

  it("reconnects by itself when its LISTEN connection is lost", async () => {
    const seen = await collect(a);
    await a.app.events.listening();
    await a.app.db.pool.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'",
    );
    // Events committed after the reconnection arrive; keep committing (one at a time) until one does.
    const sent: string[] = [];
    let committing: Promise<void> | undefined;
    await until(() => {
      committing ??= commit(b).then((id) => {
        sent.push(id);
        committing = undefined;
      });
      return seen.events.some((e) => sent.includes(e.eventId));
    }, 10_000);
    await committing; // nothing may still be writing when the instances close
    seen.stop();
  });
});

const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const redisReachable = await (async () => {
  const probe = new Redis(redisUrl, {
    lazyConnect: true,
    connectTimeout: 500,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  probe.on("error", () => {});
  try {
    await probe.connect();
    return (await probe.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
})();

// Needs a Redis server (the machine's, or REDIS_URL); skipped, and counted as skipped, without one.
(redisReachable ? describe : describe.skip)("through Redis (REDIS_URL)", () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await startTestApp({ REDIS_URL: redisUrl });
    b = await startTestApp({ REDIS_URL: redisUrl }, { database: a.database });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it("delivers each committed event once to every instance, published when it is fanned out", async () => {
    const onA = await collect(a);
    const onB = await collect(b);
    await Promise.all([a.app.events.listening(), b.app.events.listening()]);
    await rollBack(b);
    const eventId = await commit(b);
    // Nothing travels until a dispatcher fans the event out; then exactly once, whichever instance.
    await new Promise((r) => setTimeout(r, 100));
    expect(onA.events).toHaveLength(0);
    await Promise.all([dispatcherOf(a).runOnce(), dispatcherOf(b).runOnce()]);
    await until(() => onA.events.length > 0 && onB.events.length > 0);
    await new Promise((r) => setTimeout(r, 100));
    onA.stop();
    onB.stop();
    for (const seen of [onA, onB]) {
      expect(seen.events.map((e) => e.eventId)).toEqual([eventId]);
      expect(seen.events[0]).toMatchObject({ eventType: "vulnerability.created", data: { title: "SQL injection" } });
    }
  });

  it("carries each event's audience to the other instances", async () => {
    const onA = await collect(a);
    await a.app.events.listening();
    const audience = { teams: ["team-x", "team-y"], teamsAll: true };
    const eventId = await b.app.db.prisma.$transaction(
      async (tx) => (await recordEvents(tx, [{ type: "vulnerability.created", data: vulnerability(), audience }]))[0]!,
    );
    await dispatcherOf(b).runOnce();
    await until(() => onA.events.some((e) => e.eventId === eventId));
    onA.stop();
    expect(onA.events.find((e) => e.eventId === eventId)).toMatchObject({ audience });
  });

  it("ignores malformed messages on the channel and keeps delivering", async () => {
    const onA = await collect(a);
    const publisher = new Redis(redisUrl);
    try {
      // The next event as it would come, but without its audience (whom it may reach): taken, it
      // would stand for the real one at that position, which would then be skipped.
      const unaddressed = {
        eventId: newId(),
        eventType: "vulnerability.created",
        timestamp: new Date().toISOString(),
        data: vulnerability(),
        position: a.app.events.position() + 1,
        applicationId: APPLICATION_ID,
      };
      for (const garbage of [
        "{not json",
        "null",
        "42",
        JSON.stringify({ eventType: "nope" }),
        JSON.stringify(unaddressed),
      ]) {
        await publisher.publish(REDIS_EVENTS_CHANNEL, garbage);
      }
      const eventId = await commit(b);
      await dispatcherOf(b).runOnce();
      await until(() => onA.events.some((e) => e.eventId === eventId));
      expect(onA.events.map((e) => e.eventId)).toEqual([eventId]);
      // Still serving, and still listening, after the garbage.
      expect((await a.request("GET", "/healthz")).status).toBe(200);
      const next = await commit(b);
      await dispatcherOf(b).runOnce();
      await until(() => onA.events.some((e) => e.eventId === next));
    } finally {
      onA.stop();
      publisher.disconnect();
    }
  });

  it("shares a caller's rate-limit budget across instances", async () => {
    const c = await startTestApp({ REDIS_URL: redisUrl, RATE_LIMIT_PER_MINUTE: "3" }, { database: a.database });
    const d = await startTestApp({ REDIS_URL: redisUrl, RATE_LIMIT_PER_MINUTE: "3" }, { database: a.database });
    try {
      const token = await c.token(["applications:read"], `caller-${APPLICATION_ID}`); // unique per run
      expect((await c.request("GET", "/applications", { token })).status).toBe(200);
      expect((await d.request("GET", "/applications", { token })).status).toBe(200);
      const third = await c.request("GET", "/applications", { token });
      expect(third.headers.get("ratelimit-remaining")).toBe("0");
      const fourth = await d.request("GET", "/applications", { token });
      expect(fourth.status).toBe(429);
      expect(Number(fourth.headers.get("retry-after"))).toBeGreaterThan(0);
    } finally {
      await d.close();
      await c.close();
    }
  });
});
