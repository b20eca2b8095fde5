// Turns every failure into problem+json. Domain errors map by kind; the database being unreachable is
// a 503 with Retry-After (its health logs the outage once, not each request); anything unexpected is
// logged with the request id and answered 500 with no internals.
import type Koa from "koa";
import { InvalidTokenError } from "../../auth/verify-token.ts";
import { DatabaseUnavailable, RETRY_AFTER_SECONDS, type DatabaseHealth } from "../../db/database-health.ts";
import { DomainError, type ErrorKind } from "../../errors.ts";
import { HttpProblem, problem, PROBLEM_CONTENT_TYPE, type Problem, type ProblemCode } from "../problem.ts";

const CODE_OF_KIND: Record<ErrorKind, ProblemCode> = {
  invalid: "validation_failed",
  unauthenticated: "unauthorized",
  forbidden: "forbidden",
  not_found: "not_found",
  conflict: "conflict",
  expired: "cursor_expired",
  tool_failed: "tool_failed",
};

export function wwwAuthenticate(err: InvalidTokenError | DomainError): string {
  if (err instanceof InvalidTokenError) {
    return err.reason === "missing" ? "Bearer" : 'Bearer error="invalid_token"';
  }
  if (err.kind === "forbidden") return `Bearer error="insufficient_scope", scope="${err.details.scope ?? ""}"`;
  return "Bearer";
}

function toProblem(err: unknown): { body: Problem; headers: Record<string, string> } | null {
  if (err instanceof HttpProblem) return { body: err.problem, headers: err.headers };
  if (err instanceof InvalidTokenError) {
    return { body: problem("unauthorized", err.message), headers: { "WWW-Authenticate": wwwAuthenticate(err) } };
  }
  if (err instanceof DomainError) {
    // A 403 for the caller's teams (CONTRACT §17) is no matter of scope: no challenge.
    const challenged = err.kind === "unauthenticated" || (err.kind === "forbidden" && err.details.scope !== undefined);
    const headers: Record<string, string> = challenged ? { "WWW-Authenticate": wwwAuthenticate(err) } : {};
    return { body: problem(CODE_OF_KIND[err.kind], err.message, err.details.errors), headers };
  }
  return null;
}

export function sendProblem(ctx: Koa.Context, body: Problem, headers: Record<string, string> = {}) {
  ctx.status = body.status;
  ctx.set(headers);
  ctx.type = PROBLEM_CONTENT_TYPE;
  ctx.body = body;
}

export function errorHandler(health?: Pick<DatabaseHealth, "failed">): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const known = toProblem(err);
      if (known) return sendProblem(ctx, known.body, known.headers);
      if (err instanceof DatabaseUnavailable || health?.failed(err)) {
        return sendProblem(ctx, problem("unavailable", "The database cannot be reached; try again shortly"), {
          "Retry-After": String(RETRY_AFTER_SECONDS),
        });
      }
      ctx.state.log?.error({ err }, "unhandled error");
      sendProblem(ctx, problem("internal", "An unexpected error occurred; quote the request id when reporting it"));
    }
  };
}
