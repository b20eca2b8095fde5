// The event log's new events through Redis (REDIS_URL): the instance that fans events out publishes
// them, with their positions, right after the fan-out commits (publishEvents); every instance
// subscribes. Redis may drop messages (while it is away, or a subscriber reconnects): the bus reads
// any gap from Postgres, and reads on from where it stopped each time the subscription is ready again.
import { Redis } from "ioredis";
import type { EventAudience } from "../domain/access/viewer.ts";
import type { Logger } from "../log.ts";
import { isEventType } from "./catalog.ts";
import type { LoggedEvent } from "./event-log.ts";
import type { EventSource } from "./pubsub.ts";

export const REDIS_EVENTS_CHANNEL = "appsec:events";

export async function publishEvents(redis: Redis, events: readonly LoggedEvent[]): Promise<void> {
  if (!events.length) return;
  const pipeline = redis.pipeline();
  for (const event of events) pipeline.publish(REDIS_EVENTS_CHANNEL, JSON.stringify(event));
  await pipeline.exec();
}

/** The event in a channel message, or undefined for anything else (the channel is not ours alone). */
function parseEvent(message: string): LoggedEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const e = value as Partial<Record<keyof LoggedEvent, unknown>>;
  const valid =
    typeof e.eventId === "string" &&
    typeof e.eventType === "string" &&
    isEventType(e.eventType) &&
    typeof e.timestamp === "string" &&
    typeof e.data === "object" &&
    e.data !== null &&
    Number.isSafeInteger(e.position) &&
    (e.position as number) > 0 &&
    (typeof e.applicationId === "string" || e.applicationId === null) &&
    isAudience(e.audience);
  return valid ? (value as LoggedEvent) : undefined;
}

/** An event without one (an older instance's message) is left out: the bus reads it from the log. */
function isAudience(value: unknown): value is EventAudience {
  if (typeof value !== "object" || value === null) return false;
  const { teams, teamsAll } = value as Partial<Record<keyof EventAudience, unknown>>;
  return (
    typeof teamsAll === "boolean" &&
    (teams === null || (Array.isArray(teams) && teams.every((team) => typeof team === "string")))
  );
}

export function redisEventSource(redisUrl: string, log: Logger): EventSource {
  let subscriber: Redis | undefined;
  return {
    async start(hooks) {
      // ioredis reconnects (and resubscribes) by itself; only a failed first connection is reported.
      const client = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
      client.on("message", (channel: string, message: string) => {
        if (channel !== REDIS_EVENTS_CHANNEL) return;
        // A throw here would be uncaught (ioredis emits from its socket handler) and end the process.
        const event = parseEvent(message);
        if (event) hooks.offer([event]);
        else log.warn({ channel, bytes: message.length }, "ignored a malformed message on the events channel");
      });
      client.on("error", () => {}); // the shared client's health logs Redis going and coming back (db/redis.ts)
      try {
        await client.connect();
        await client.subscribe(REDIS_EVENTS_CHANNEL);
      } catch (err) {
        client.disconnect();
        throw err;
      }
      // After a reconnection ioredis subscribes again right after "ready"; a PING answered after that
      // SUBSCRIBE took effect, the log is read for whatever was published while nobody listened.
      client.on("ready", () =>
        setImmediate(() =>
          client.ping().then(
            () => hooks.grew(),
            () => {},
          ),
        ),
      );
      subscriber = client;
    },
    async stop() {
      const client = subscriber;
      subscriber = undefined;
      await client?.quit().catch(() => client.disconnect());
    },
  };
}
