// News of the event log through Postgres: the fan-out NOTIFYs the new head inside the transaction
// that extends the log, so LISTEN hears of it once it is committed; the bus then reads what follows
// the last event it delivered. A notification missed while reconnecting costs nothing: on listening
// again the bus reads on from where it stopped.
import type pg from "pg";
import type { DatabaseHealth } from "../db/database-health.ts";
import { listen, type Listening, type ListenSource } from "../db/listen.ts";
import type { Logger } from "../log.ts";
import { EVENT_LOG_CHANNEL } from "./event-log.ts";
import type { EventSource } from "./pubsub.ts";

export function postgresEventSource(deps: {
  listenOn: ListenSource;
  log: Logger;
  health?: DatabaseHealth;
}): EventSource {
  let listening: Listening | undefined;

  return {
    async start(hooks) {
      await listening?.close();
      const onNotification = (msg: pg.Notification) => {
        const head = Number(msg.payload);
        hooks.grew(Number.isSafeInteger(head) ? head : undefined);
      };
      const current = listen(deps.listenOn, [EVENT_LOG_CHANNEL], onNotification, {
        log: deps.log,
        health: deps.health,
        onListening: () => hooks.grew(), // whatever was logged while not listening
      });
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
}
