// Committed events through Postgres: the outbox NOTIFYs the writing transaction's id inside that
// transaction, once however many events it records, so LISTEN hears it only once committed; the
// transaction's events are then loaded in the order they happened, a page at a time (a scanner's
// report may commit 100,000 at once), each page delivered before the next is read.
import type pg from "pg";
import { listen, type Listening } from "../db/listen.ts";
import type { Logger } from "../log.ts";
import { isEventType, toEventEnvelope, type EventEnvelope } from "./catalog.ts";
import { EVENTS_CHANNEL } from "./outbox.ts";
import type { EventSource } from "./pubsub.ts";

const LOAD_ATTEMPTS = 3;
const LOAD_RETRY_MS = 200;
const PAGE = 1_000;

interface EventRow {
  id: string;
  type: string;
  data: unknown;
  occurred_at: Date;
}

export function postgresEventSource(deps: { databaseUrl: string; pool: pg.Pool; log: Logger }): EventSource {
  let listening: Listening | undefined;

  /** One page of the transaction's events, after `last` (keyset on the index (tx_id, occurred_at, id)). */
  async function loadPage(txId: string, last: EventRow | undefined): Promise<EventRow[]> {
    const { rows } = await deps.pool.query<EventRow>(
      `SELECT id, type, data, occurred_at FROM events
        WHERE tx_id = $1 AND ($2::timestamptz IS NULL OR (occurred_at, id) > ($2, $3::uuid))
        ORDER BY occurred_at, id LIMIT ${PAGE}`,
      [txId, last?.occurred_at ?? null, last?.id ?? null],
    );
    return rows;
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
    let last: EventRow | undefined;
    for (;;) {
      const rows = await withRetries(txId, () => loadPage(txId, last), stopped);
      if (!rows || stopped()) return;
      for (const row of rows) if (isEventType(row.type)) deliver(toEventEnvelope({ ...row, type: row.type }));
      if (rows.length < PAGE) return;
      last = rows.at(-1);
    }
  }

  /** The page, or undefined once the attempts are spent (logged: live subscribers miss the rest). */
  async function withRetries(txId: string, load: () => Promise<EventRow[]>, stopped: () => boolean): Promise<EventRow[] | undefined> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await load();
      } catch (err) {
        if (attempt >= LOAD_ATTEMPTS || stopped()) {
          deps.log.error({ err, txId }, "could not load notified events; live subscribers miss them");
          return undefined;
        }
        await new Promise((resolve) => setTimeout(resolve, LOAD_RETRY_MS * attempt));
      }
    }
  }
}
