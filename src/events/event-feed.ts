// Chooses how news of the event log reaches this instance's subscribers: Postgres LISTEN by default,
// Redis when REDIS_URL is set (then the instance that fans events out publishes them). Either way the
// events this instance fans out reach its own subscribers at once, Redis or not, and the bus reads from
// Postgres whatever news did not bring.
import type { Redis } from "ioredis";
import type pg from "pg";
import type { DatabaseHealth } from "../db/database-health.ts";
import type { ListenSource } from "../db/listen.ts";
import type { Logger } from "../log.ts";
import { readHead, readLog, type LoggedEvent } from "./event-log.ts";
import { postgresEventSource } from "./postgres-event-source.ts";
import { createEventBus, type EventBus, type LogReader } from "./pubsub.ts";
import { publishEvents, redisEventSource } from "./redis-event-source.ts";

/** Events the bus reads from Postgres at a time. */
const PAGE = 1_000;

export interface EventFeed {
  bus: EventBus;
  /** For the dispatcher: the events it just fanned out, in log order. */
  fannedOut(events: readonly LoggedEvent[]): void;
  /** Whether fannedOut would use them: with Redis (other instances' subscribers), or once this instance's bus receives. */
  wantsEvents(): boolean;
  close(): Promise<void>;
}

export function createEventFeed(deps: {
  /** With Redis: its URL (subscribing takes a connection of its own) and a client to publish with. */
  redis?: { url: string; client: Redis };
  /** Where the Postgres source LISTENs: the instance's shared listener, or a session's URL (DATABASE_DIRECT_URL behind a pooler). */
  listenOn: ListenSource;
  pool: pg.Pool;
  log: Logger;
  health?: DatabaseHealth;
}): EventFeed {
  const reader: LogReader = {
    head: () => readHead(deps.pool),
    after: (position) => readLog(deps.pool, { after: position, limit: PAGE, scanLimit: PAGE }),
  };
  const source = deps.redis
    ? redisEventSource(deps.redis.url, deps.log)
    : postgresEventSource({ listenOn: deps.listenOn, log: deps.log, health: deps.health });
  const bus = createEventBus({ source, log: reader, logger: deps.log, health: deps.health });
  const redis = deps.redis?.client;
  return {
    bus,
    fannedOut(events) {
      bus.offer(events);
      // The other instances hear of them through Redis; if it is away they read them from the log
      // when it is back (db/redis.ts logs the outage once).
      if (redis)
        publishEvents(redis, events).catch((err: unknown) =>
          deps.log.debug({ err }, "could not publish events to Redis"),
        );
    },
    wantsEvents: () => redis !== undefined || bus.receiving(),
    close: () => bus.close(),
  };
}
