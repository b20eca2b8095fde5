// Operational endpoints; they need no token (except /metrics when METRICS_TOKEN is set).
import { timingSafeEqual } from "node:crypto";
import type pg from "pg";
import { z } from "zod";
import { DatabaseUnavailable, RETRY_AFTER_SECONDS, type DatabaseHealth } from "../../db/database-health.ts";
import { pendingMigrations, type Migration } from "../../db/migrate.ts";
import type { Metrics } from "../../metrics.ts";
import { httpProblem } from "../problem.ts";
import type { RouteDefinition } from "../route.ts";

const tag = "Operations";

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function systemRoutes(deps: {
  pool: pg.Pool;
  health?: Pick<DatabaseHealth, "available" | "failed">;
  migrations: Migration[];
  metrics: Metrics;
  metricsToken?: string;
  openApi: () => unknown;
  /** True from the shutdown signal on: load balancers stop routing here while requests still finish. */
  stopping: () => boolean;
}): RouteDefinition[] {
  return [
    {
      operationId: "Health",
      method: "GET",
      path: "/healthz",
      summary: "Liveness: the process serves requests",
      description:
        "Answers 200 while the process can serve requests, whatever the database's state: for a liveness probe, which restarts the process when it stops answering.",
      tag,
      public: true,
      success: { status: 200, description: "Alive", schema: z.object({ status: z.literal("ok") }) },
      errors: [],
      async handle(ctx) {
        ctx.body = { status: "ok" };
      },
    },
    {
      operationId: "Ready",
      method: "GET",
      path: "/readyz",
      summary: "Readiness: database reachable and every migration applied, and not shutting down",
      description:
        "Answers 200 when the database answers, every migration is applied and the process is not shutting down, else 503 with what is missing: for a load balancer's readiness probe.",
      tag,
      public: true,
      success: { status: 200, description: "Ready", schema: z.object({ status: z.literal("ready") }) },
      errors: [503],
      errorBodies: {
        503: z
          .object({
            status: z.enum(["shutting down", "migrations pending", "database unreachable"]),
            pending: z.array(z.string()).optional().describe("The migrations not applied yet"),
          })
          .describe("What keeps the instance from being ready"),
      },
      async handle(ctx) {
        if (deps.stopping()) {
          ctx.status = 503;
          ctx.body = { status: "shutting down" };
          return;
        }
        try {
          if (deps.health && !deps.health.available()) throw new DatabaseUnavailable();
          const pending = await pendingMigrations(deps.pool, deps.migrations);
          ctx.status = pending.length ? 503 : 200;
          ctx.body = pending.length ? { status: "migrations pending", pending } : { status: "ready" };
        } catch (err) {
          deps.health?.failed(err);
          ctx.status = 503;
          ctx.set("Retry-After", String(RETRY_AFTER_SECONDS));
          ctx.body = { status: "database unreachable" };
        }
      },
    },
    {
      operationId: "Metrics",
      method: "GET",
      path: "/metrics",
      summary: "Prometheus metrics (bearer METRICS_TOKEN when configured)",
      description:
        "Prometheus text exposition of the service's counters, gauges and histograms (requests, deliveries, scans, the event log, pools). With METRICS_TOKEN set, a bearer token equal to it is required.",
      tag,
      public: true,
      success: {
        status: 200,
        description: "Prometheus text exposition",
        contentType: "text/plain",
        schema: z.string(),
      },
      errors: [401],
      async handle(ctx) {
        if (deps.metricsToken) {
          const given = /^Bearer (.+)$/i.exec(ctx.get("Authorization"))?.[1] ?? "";
          if (!sameSecret(given, deps.metricsToken)) {
            throw httpProblem("unauthorized", "The metrics token is missing or wrong", {
              "WWW-Authenticate": "Bearer",
            });
          }
        }
        ctx.type = deps.metrics.registry.contentType;
        ctx.body = await deps.metrics.registry.metrics();
      },
    },
    {
      operationId: "OpenApi",
      method: "GET",
      path: "/openapi.json",
      summary: "This API's OpenAPI 3.1 description",
      description: "This document, generated from the routes the service serves: what it checks is what it describes.",
      tag,
      public: true,
      success: { status: 200, description: "OpenAPI document", schema: z.object({}).passthrough() },
      errors: [],
      async handle(ctx) {
        ctx.body = deps.openApi();
      },
    },
  ];
}
