// Live events for subscribers on this instance. The source is the ONE outbox: recordEvent NOTIFYs
// the event id on `appsec_events` inside the writing transaction, so this listener hears only
// committed events (from any instance sharing the database), loads the row and publishes the
// envelope to an in-process pub/sub. LISTEN starts with the first subscriber.
import pg from "pg";
import { createPubSub, filter, pipe } from "graphql-yoga";
import type { Logger } from "../log.ts";
import { isEventType, type EventEnvelope } from "./catalog.ts";
import { EVENTS_CHANNEL } from "./outbox.ts";

export interface EventBus {
  /** Committed events from now on, optionally narrowed; iteration ends when the consumer returns. */
  subscribe(accept?: (event: EventEnvelope) => boolean): AsyncIterable<EventEnvelope>;
  /** Resolves once LISTEN is active (tests wait on it before committing). */
  listening(): Promise<void>;
  close(): Promise<void>;
}

export function createEventBus(deps: { databaseUrl: string; pool: pg.Pool; log: Logger }): EventBus {
  const pubsub = createPubSub<{ event: [EventEnvelope] }>();
  let listener: Promise<pg.Client> | undefined;
  let closed = false;

  async function publish(eventId: string) {
    const { rows } = await deps.pool.query<{ id: string; type: string; data: unknown; occurred_at: Date }>(
      "SELECT id, type, data, occurred_at FROM events WHERE id = $1",
      [eventId],
    );
    const row = rows[0];
    if (!row || !isEventType(row.type)) return;
    pubsub.publish("event", {
      eventId: row.id,
      eventType: row.type,
      timestamp: row.occurred_at.toISOString(),
      data: row.data as EventEnvelope["data"],
    });
  }

  async function connect(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: deps.databaseUrl });
    client.on("notification", (msg) => {
      if (msg.channel !== EVENTS_CHANNEL || !msg.payload) return;
      publish(msg.payload).catch((err) => deps.log.error({ err }, "could not publish event"));
    });
    client.on("error", (err) => {
      // Lost connection: the next subscriber reconnects.
      deps.log.error({ err }, "event listener connection lost");
      listener = undefined;
    });
    await client.connect();
    await client.query(`LISTEN ${EVENTS_CHANNEL}`);
    return client;
  }

  const listening = () => {
    if (closed) return Promise.reject(new Error("event bus closed"));
    listener ??= connect().catch((err) => {
      listener = undefined;
      throw err;
    });
    return listener.then(() => undefined);
  };

  return {
    listening,
    subscribe(accept = () => true) {
      const source = pubsub.subscribe("event");
      return pipe(
        (async function* () {
          await listening();
          yield* source;
        })(),
        filter(accept),
      );
    },
    async close() {
      closed = true;
      const client = await listener?.catch(() => undefined);
      listener = undefined;
      await client?.end();
    },
  };
}
