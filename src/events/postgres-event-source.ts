// Committed events through Postgres: the outbox NOTIFYs the writing transaction's id inside that
// transaction, once however many events it records, so LISTEN hears it only once committed; the
// transaction's events are then loaded in one query, in the order they happened.
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

  async function load(txId: string): Promise<EventEnvelope[]> {
    const { rows } = await deps.pool.query<{ id: string; type: string; data: unknown; occurred_at: Date }>(
      "SELECT id, type, data, occurred_at FROM events WHERE tx_id = $1 ORDER BY occurred_at, id",
      [txId],
    );
    return rows.flatMap((row) => (isEventType(row.type) ? [toEventEnvelope({ ...row, type: row.type })] : []));
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

  async function loadAndDeliver(txId: string, deliver: (event: EventEnvelope) => void, stopped: () => boolean): Promise<void> {
    if (!/^\d{1,20}$/.test(txId)) {
      deps.log.warn({ payload: txId.slice(0, 100) }, "ignoring a malformed events notification");
      return;
    }
    for (let attempt = 1; ; attempt++) {
      try {
        const events = await load(txId);
        if (!stopped()) events.forEach(deliver);
        return;
      } catch (err) {
        if (attempt >= LOAD_ATTEMPTS || stopped()) {
          deps.log.error({ err, txId }, "could not load notified events; live subscribers miss them");
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, LOAD_RETRY_MS * attempt));
      }
    }
  }
}
