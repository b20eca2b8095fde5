// Per-caller request budget (CONTRACT §9): keyed by token `sub`, or by client address for
// requests without a valid token. RateLimit-* headers on every response, Retry-After on 429.
import type Koa from "koa";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import { httpProblem } from "../problem.ts";

export function rateLimit(perMinute: number): Koa.Middleware {
  const limiter = new RateLimiterMemory({ points: perMinute, duration: 60 });
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
