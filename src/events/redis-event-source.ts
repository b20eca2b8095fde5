// Committed events through Redis (REDIS_URL): the dispatcher publishes each event once, right after
// the transaction that fans it out commits (publishEvents); every instance subscribes.
import { Redis } from "ioredis";
import type { Logger } from "../log.ts";
import { isEventType, type EventEnvelope } from "./catalog.ts";
import type { EventSource } from "./pubsub.ts";

export const REDIS_EVENTS_CHANNEL = "appsec:events";

export async function publishEvents(redis: Redis, events: readonly EventEnvelope[]): Promise<void> {
  if (!events.length) return;
  const pipeline = redis.pipeline();
  for (const event of events) pipeline.publish(REDIS_EVENTS_CHANNEL, JSON.stringify(event));
  await pipeline.exec();
}

/** The envelope in a channel message, or undefined for anything else (the channel is not ours alone). */
function parseEnvelope(message: string): EventEnvelope | undefined {
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const e = value as Partial<Record<keyof EventEnvelope, unknown>>;
  const valid =
    typeof e.eventId === "string" &&
    typeof e.eventType === "string" &&
    isEventType(e.eventType) &&
    typeof e.timestamp === "string" &&
    typeof e.data === "object" &&
    e.data !== null;
  return valid ? (value as EventEnvelope) : undefined;
}

export function redisEventSource(redisUrl: string, log: Logger): EventSource {
  let subscriber: Redis | undefined;
  return {
    async start(deliver) {
      // ioredis reconnects (and resubscribes) by itself; only a failed first connection is reported.
      const client = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
      client.on("message", (channel: string, message: string) => {
        if (channel !== REDIS_EVENTS_CHANNEL) return;
        // A throw here would be uncaught (ioredis emits from its socket handler) and end the process.
        const event = parseEnvelope(message);
        if (event) deliver(event);
        else log.warn({ channel, bytes: message.length }, "ignored a malformed message on the events channel");
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
