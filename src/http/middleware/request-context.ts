// Request id (X-Request-Id honoured when sane, else generated, always echoed), one structured log
// line per request, and the request duration metric.
import { randomUUID } from "node:crypto";
import type Koa from "koa";
import type { Logger } from "../../log.ts";
import type { Metrics } from "../../metrics.ts";

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestContext(log: Logger, metrics: Metrics): Koa.Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const incoming = ctx.get("X-Request-Id");
    const requestId = SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.state.log = log.child({ requestId });
    ctx.set("X-Request-Id", requestId);
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? "unmatched";
      metrics.httpRequestDuration.observe({ method: ctx.method, route, status: String(ctx.status) }, seconds);
      ctx.state.log.info(
        {
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          durationMs: Math.round(seconds * 1e4) / 10,
          sub: ctx.state.actor?.sub,
        },
        "request",
      );
    }
  };
}
