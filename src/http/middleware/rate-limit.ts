// Per-caller request budget (docs/spec/CONTRACT.md §9): keyed by token `sub`, or by client address for
// requests without a valid token. RateLimit-* headers on every response, Retry-After on 429.
import type { Redis } from "ioredis";
import type Koa from "koa";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { httpProblem } from "../problem.ts";

/**
 * Counted in this process, or in Redis when there is one so that instances share the budget; if
 * Redis is unreachable the count falls back to this process rather than failing requests.
 */
export function createRateLimiter(perMinute: number, redis?: Redis): RateLimiterAbstract {
  const local = new RateLimiterMemory({ points: perMinute, duration: 60 });
  if (!redis) return local;
  return new RateLimiterRedis({
    storeClient: redis,
    points: perMinute,
    duration: 60,
    keyPrefix: "appsec:ratelimit",
    rejectIfRedisNotReady: true,
    insuranceLimiter: local,
  });
}

export function rateLimit(limiter: RateLimiterAbstract, perMinute: number): Koa.Middleware {
  return async (ctx, next) => {
    const key = ctx.state.actor ? `sub:${ctx.state.actor.sub}` : `ip:${ctx.ip}`;
    let res: RateLimiterRes;
    let limited = false;
    try {
      res = await limiter.consume(key);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      res = rejection;
      limited = true;
    }
    const resetSeconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
    ctx.set({
      "RateLimit-Limit": String(perMinute),
      "RateLimit-Remaining": String(Math.max(0, res.remainingPoints)),
      "RateLimit-Reset": String(resetSeconds),
    });
    if (limited) {
      throw httpProblem("rate_limited", `Rate limit of ${perMinute} requests per minute exceeded`, {
        "Retry-After": String(resetSeconds),
      });
    }
    await next();
  };
}
