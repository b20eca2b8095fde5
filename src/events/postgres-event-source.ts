// Committed events through Postgres: recordEvent NOTIFYs the event id inside the writing
// transaction, so LISTEN hears it only once committed; the row is then loaded by id.
import type pg from "pg";
import { listen, type Listening } from "../db/listen.ts";
import type { Logger } from "../log.ts";
import { isEventType, toEventEnvelope, type EventEnvelope } from "./catalog.ts";
import { EVENTS_CHANNEL } from "./outbox.ts";
import type { EventSource } from "./pubsub.ts";

const LOAD_ATTEMPTS = 3;
const LOAD_RETRY_MS = 200;

export function postgresEventSource(deps: { databaseUrl: string; pool: pg.Pool; log: Logger }): EventSource {
  let listening: Listening | undefined;

  async function load(eventId: string): Promise<EventEnvelope | undefined> {
    const { rows } = await deps.pool.query<{ id: string; type: string; data: unknown; occurred_at: Date }>(
      "SELECT id, type, data, occurred_at FROM events WHERE id = $1",
      [eventId],
    );
    const row = rows[0];
    if (!row || !isEventType(row.type)) return undefined;
    return toEventEnvelope({ ...row, type: row.type });
  }

  return {
    async start(deliver) {
      await listening?.close();
      // A lost connection is the listener's to restore; a failed load concerns one event only.
      const onNotification = (msg: pg.Notification) => {
        if (msg.payload) void loadAndDeliver(msg.payload, deliver, () => listening !== current);
      };
      const current = listen(deps.databaseUrl, [EVENTS_CHANNEL], onNotification, { log: deps.log });
      listening = current;
      try {
        await current.ready;
      } catch (err) {
        if (listening === current) listening = undefined;
        await current.close();
        throw err;
      }
    },
    async stop() {
      const current = listening;
      listening = undefined;
      await current?.close();
    },
  };

  async function loadAndDeliver(eventId: string, deliver: (event: EventEnvelope) => void, stopped: () => boolean): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const event = await load(eventId);
        if (event && !stopped()) deliver(event);
        return;
      } catch (err) {
        if (attempt >= LOAD_ATTEMPTS || stopped()) {
          deps.log.error({ err, eventId }, "could not load a notified event; live subscribers miss it");
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, LOAD_RETRY_MS * attempt));
      }
    }
  }
}
