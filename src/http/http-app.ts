// The Koa application: middleware order matters. Request context and error mapping wrap
// everything; the token is verified before the rate limiter (which counts per `sub`); routes then
// demand authentication before they read a body or look anything up.
import Router from "@koa/router";
import Koa from "koa";
import type { RateLimiterAbstract } from "rate-limiter-flexible";
import type { TokenVerifier } from "../auth/verify-token.ts";
import type { DatabaseHealth } from "../db/database-health.ts";
import type { ServiceContext } from "../domain/context.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../metrics.ts";
import { authenticate } from "./middleware/authenticate.ts";
import { errorHandler, sendProblem } from "./middleware/errors.ts";
import { requireWellFormedHost } from "./middleware/host-header.ts";
import { requireTextQuery } from "./middleware/query-text.ts";
import { rateLimit } from "./middleware/rate-limit.ts";
import { requestContext } from "./middleware/request-context.ts";
import { securityHeaders } from "./middleware/security-headers.ts";
import { problem } from "./problem.ts";
import { forwardedRequest, type TrustProxy } from "./trusted-proxies.ts";
import { mountRoutes, protectedRouteMatcher, type RouteDefinition } from "./route.ts";

export interface HttpAppDeps {
  log: Logger;
  metrics: Metrics;
  verifyToken: TokenVerifier;
  rateLimitPerMinute: number;
  rateLimiter: RateLimiterAbstract;
  /** Whose X-Forwarded-For and -Proto count (TRUST_PROXY); nobody's by default. */
  trustProxy?: TrustProxy;
  routes: readonly RouteDefinition[];
  serviceContext: (ctx: Koa.Context) => ServiceContext;
  /** Answers 503 while the database is down, and hears of connection errors (logged once there). */
  health?: DatabaseHealth;
  /** Extra middleware mounted before the REST router (the GraphQL endpoint, the console). */
  before?: Koa.Middleware[];
  /** Paths of those that answer 401 without a valid token before they read anything (GraphQL's). */
  protectedPaths?: readonly string[];
}

export function createHttpApp(deps: HttpAppDeps): { koa: Koa; router: Router } {
  const koa = new Koa();
  koa.silent = true;
  // Paths match exactly as declared: /Metrics or /applications/ is no other name for a route (a proxy rule
  // keeping /metrics internal is not bypassed by its case).
  const router = new Router({ sensitive: true, strict: true });
  mountRoutes(router, deps.routes, deps.serviceContext, deps.health);

  if (deps.trustProxy) koa.use(forwardedRequest(deps.trustProxy));
  koa.use(securityHeaders());
  koa.use(requestContext(deps.log, deps.metrics));
  koa.use(errorHandler(deps.health));
  koa.use(requireWellFormedHost());
  koa.use(authenticate(deps.verifyToken));
  const protectedRoute = protectedRouteMatcher(deps.routes);
  koa.use(requireTextQuery((ctx) => deps.protectedPaths?.includes(ctx.path) || protectedRoute(ctx.method, ctx.path)));
  koa.use(rateLimit(deps.rateLimiter, deps.rateLimitPerMinute));
  for (const mw of deps.before ?? []) koa.use(mw);
  koa.use(unmatchedAsProblem());
  koa.use(router.routes());
  koa.use(router.allowedMethods());
  return { koa, router };
}

/** Unknown routes (404) and known paths with a wrong method (405, Allow set by the router). */
function unmatchedAsProblem(): Koa.Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.status === 405 || ctx.status === 501) {
      sendProblem(ctx, problem("method_not_allowed", `${ctx.method} is not allowed on ${ctx.path}`));
    } else if (ctx.status === 404 && ctx.body == null) {
      sendProblem(ctx, problem("not_found", `No route for ${ctx.method} ${ctx.path}`));
    }
  };
}
