// Live events for subscribers on this instance. Everything comes from the ONE outbox, through a
// source that hears only committed events from any instance sharing the database:
// - Postgres (default): LISTEN on the channel recordEvent NOTIFYs inside the writing transaction;
// - Redis (REDIS_URL): the dispatcher publishes each event once, when it fans it out.
// The source starts with the first subscriber and reconnects by itself after losing its connection.
import { createPubSub, filter, pipe } from "graphql-yoga";
import type { Logger } from "../log.ts";
import type { EventEnvelope } from "./catalog.ts";

/** Where committed events come from; `start` resolves once they are being received. */
export interface EventSource {
  start(deliver: (event: EventEnvelope) => void, onLost: (err: unknown) => void): Promise<void>;
  stop(): Promise<void>;
}

export interface EventBus {
  /**
   * Committed events from the moment the source is receiving, optionally narrowed; iteration ends
   * as soon as the consumer returns.
   */
  subscribe(accept?: (event: EventEnvelope) => boolean): Promise<AsyncIterableIterator<EventEnvelope>>;
  /** Resolves once the source is receiving (tests wait on it before committing). */
  listening(): Promise<void>;
  close(): Promise<void>;
}

const RECONNECT_DELAY_MS = 1000;

export function createEventBus(deps: { source: EventSource; log: Logger }): EventBus {
  const pubsub = createPubSub<{ event: [EventEnvelope] }>();
  let started: Promise<void> | undefined;
  let closed = false;

  const deliver = (event: EventEnvelope) => pubsub.publish("event", event);

  function onLost(err: unknown) {
    deps.log.error({ err }, "event source connection lost; reconnecting");
    started = undefined;
    setTimeout(() => {
      if (!closed) listening().catch(() => {}); // a failure reports itself through onLost again
    }, RECONNECT_DELAY_MS).unref();
  }

  function listening(): Promise<void> {
    if (closed) return Promise.reject(new Error("event bus closed"));
    started ??= deps.source.start(deliver, onLost).catch((err) => {
      onLost(err);
      throw err;
    });
    return started;
  }

  return {
    listening,
    // No async-generator wrapper: a generator's return() waits for its pending next(), so ending a
    // subscription would hang until the next event; the pubsub's iterators end at once.
    async subscribe(accept = () => true) {
      await listening();
      return pipe(pubsub.subscribe("event"), filter(accept));
    },
    async close() {
      closed = true;
      started = undefined;
      await deps.source.stop();
    },
  };
}
