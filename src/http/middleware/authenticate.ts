// Verifies the bearer token when there is one and remembers the outcome; routes decide whether
// they need it (public endpoints do not). Runs before the rate limiter, which counts per `sub`.
import type Koa from "koa";
import { InvalidTokenError, type TokenVerifier } from "../../auth/verify-token.ts";

export function authenticate(verify: TokenVerifier): Koa.Middleware {
  return async (ctx, next) => {
    try {
      ctx.state.actor = await verify(ctx.get("Authorization") || undefined);
    } catch (err) {
      if (!(err instanceof InvalidTokenError)) throw err;
      ctx.state.authError = err;
    }
    await next();
  };
}

/** Throws the 401 a protected route answers when the request carried no valid token. */
export function requireAuthenticated(ctx: Koa.Context): void {
  if (!ctx.state.actor) throw ctx.state.authError ?? new InvalidTokenError("missing", "Missing bearer token");
}
