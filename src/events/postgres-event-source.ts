// Committed events through Postgres: recordEvent NOTIFYs the event id inside the writing
// transaction, so LISTEN hears it only once committed; the row is then loaded by id.
import pg from "pg";
import { isEventType, toEventEnvelope, type EventEnvelope } from "./catalog.ts";
import { EVENTS_CHANNEL } from "./outbox.ts";
import type { EventSource } from "./pubsub.ts";

export function postgresEventSource(deps: { databaseUrl: string; pool: pg.Pool }): EventSource {
  let client: pg.Client | undefined;

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
    async start(deliver, onLost) {
      const listener = new pg.Client({ connectionString: deps.databaseUrl });
      listener.on("notification", (msg) => {
        if (msg.channel !== EVENTS_CHANNEL || !msg.payload) return;
        load(msg.payload).then((event) => event && deliver(event), onLost);
      });
      listener.on("error", (err) => {
        if (client !== listener) return;
        client = undefined;
        listener.end().catch(() => {});
        onLost(err);
      });
      await listener.connect();
      await listener.query(`LISTEN ${EVENTS_CHANNEL}`);
      client = listener;
    },
    async stop() {
      const listener = client;
      client = undefined;
      await listener?.end();
    },
  };
}
