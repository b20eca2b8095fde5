// Chooses how live events reach this instance's subscribers: Postgres LISTEN by default, Redis
// when REDIS_URL is set (then the dispatcher publishes what it fans out).
import type { Redis } from "ioredis";
import type pg from "pg";
import type { Logger } from "../log.ts";
import type { EventEnvelope } from "./catalog.ts";
import { postgresEventSource } from "./postgres-event-source.ts";
import { createEventBus, type EventBus } from "./pubsub.ts";
import { publishEvents, redisEventSource } from "./redis-event-source.ts";

export interface EventFeed {
  bus: EventBus;
  /** For the dispatcher: present only when events travel through Redis. */
  publish?: (events: EventEnvelope[]) => Promise<void>;
  close(): Promise<void>;
}

export function createEventFeed(deps: {
  /** With Redis: its URL (subscribing takes a connection of its own) and a client to publish with. */
  redis?: { url: string; client: Redis };
  databaseUrl: string;
  pool: pg.Pool;
  log: Logger;
}): EventFeed {
  if (!deps.redis) {
    const bus = createEventBus({ source: postgresEventSource(deps), log: deps.log });
    return { bus, close: () => bus.close() };
  }
  const { url, client } = deps.redis;
  const bus = createEventBus({ source: redisEventSource(url, deps.log), log: deps.log });
  return { bus, publish: (events) => publishEvents(client, events), close: () => bus.close() };
}
