// Committed events through Redis (REDIS_URL): the dispatcher publishes each event once, right after
// the transaction that fans it out commits (publishEvents); every instance subscribes.
import { Redis } from "ioredis";
import type { EventEnvelope } from "./catalog.ts";
import type { EventSource } from "./pubsub.ts";

export const REDIS_EVENTS_CHANNEL = "appsec:events";

export async function publishEvents(redis: Redis, events: readonly EventEnvelope[]): Promise<void> {
  if (!events.length) return;
  const pipeline = redis.pipeline();
  for (const event of events) pipeline.publish(REDIS_EVENTS_CHANNEL, JSON.stringify(event));
  await pipeline.exec();
}

export function redisEventSource(redisUrl: string): EventSource {
  let subscriber: Redis | undefined;
  return {
    async start(deliver) {
      // ioredis reconnects (and resubscribes) by itself; only a failed first connection is reported.
      const client = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
      client.on("message", (channel: string, message: string) => {
        if (channel === REDIS_EVENTS_CHANNEL) deliver(JSON.parse(message) as EventEnvelope);
      });
      client.on("error", () => {}); // connection errors surface as reconnects; see ioredis docs
      try {
        await client.connect();
        await client.subscribe(REDIS_EVENTS_CHANNEL);
      } catch (err) {
        client.disconnect();
        throw err;
      }
      subscriber = client;
    },
    async stop() {
      const client = subscriber;
      subscriber = undefined;
      await client?.quit().catch(() => client.disconnect());
    },
  };
}
