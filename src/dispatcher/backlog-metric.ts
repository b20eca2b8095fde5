import type pg from "pg";
import { Gauge, type Registry } from "prom-client";
import { PENDING_DELIVERY } from "../domain/webhooks/pending-deliveries.ts";

/** Work waiting for the dispatcher, measured when Prometheus scrapes: pending deliveries + unfanned events. */
export function registerBacklogGauge(registry: Registry, pool: pg.Pool): void {
  new Gauge({
    name: "webhook_backlog",
    help: "Pending webhook deliveries plus events not yet fanned out to subscriptions",
    registers: [registry],
    async collect() {
      // With the database away there is no figure to give; the rest of /metrics still answers.
      const rows = await pool
        .query<{ n: string }>(
          `SELECT (SELECT count(*) FROM webhook_deliveries WHERE ${PENDING_DELIVERY})
                + (SELECT count(*) FROM events WHERE fanned_out_at IS NULL) AS n`,
        )
        .then(
          (result) => result.rows,
          () => undefined,
        );
      if (rows) this.set(Number(rows[0]?.n ?? 0));
    },
  });
}
