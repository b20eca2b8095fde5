import type pg from "pg";
import { Gauge, type Registry } from "prom-client";

/** Work waiting for the dispatcher, measured when Prometheus scrapes: pending deliveries + unfanned events. */
export function registerBacklogGauge(registry: Registry, pool: pg.Pool): void {
  new Gauge({
    name: "webhook_backlog",
    help: "Pending webhook deliveries plus events not yet fanned out to subscriptions",
    registers: [registry],
    async collect() {
      const { rows } = await pool.query<{ n: string }>(
        // Pending deliveries counted as the two partial indexes hold them (fresh ones and retries).
        `SELECT (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending' AND attempt_count = 0)
              + (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending' AND attempt_count > 0)
              + (SELECT count(*) FROM events WHERE fanned_out_at IS NULL) AS n`,
      );
      this.set(Number(rows[0]?.n ?? 0));
    },
  });
}
