import { collectDefaultMetrics, Counter, Histogram, Registry } from "prom-client";

/** One registry per app instance (tests build several apps in one process). */
export interface Metrics {
  registry: Registry;
  httpRequestDuration: Histogram<"method" | "route" | "status">;
  webhookDeliveries: Counter<"outcome">;
  webhookAttemptDuration: Histogram;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const httpRequestDuration = new Histogram({
    name: "http_request_duration_seconds",
    help: "HTTP request duration by method, matched route and status",
    labelNames: ["method", "route", "status"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const webhookDeliveries = new Counter({
    name: "webhook_deliveries_total",
    help: "Webhook delivery attempts by outcome (delivered, retry, dropped, failed, cancelled)",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  const webhookAttemptDuration = new Histogram({
    name: "webhook_attempt_duration_seconds",
    help: "Duration of webhook delivery attempts",
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return { registry, httpRequestDuration, webhookDeliveries, webhookAttemptDuration };
}
