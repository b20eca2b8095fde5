// DomainError kinds → extensions.code; the database being unreachable → UNAVAILABLE (HTTP 503 with
// Retry-After). Anything else is masked (never shown) and logged with the request id by the logging
// plugin (error-logging.ts).
import { GraphQLError } from "graphql";
import { createGraphQLError, maskError as yogaMaskError } from "graphql-yoga";
import { DatabaseUnavailable, isConnectionError, RETRY_AFTER_SECONDS } from "../db/database-health.ts";
import { DomainError, type ErrorKind } from "../errors.ts";

export const CODE_OF_KIND: Record<ErrorKind, string> = {
  invalid: "BAD_USER_INPUT",
  unauthenticated: "UNAUTHENTICATED",
  forbidden: "FORBIDDEN",
  not_found: "NOT_FOUND",
  conflict: "CONFLICT",
  expired: "CURSOR_EXPIRED",
  tool_failed: "TOOL_FAILED",
};

export function domainErrorToGraphQL(err: DomainError, base?: GraphQLError): GraphQLError {
  return createGraphQLError(err.message, {
    nodes: base?.nodes,
    source: base?.source,
    positions: base?.positions,
    path: base?.path,
    extensions: {
      code: CODE_OF_KIND[err.kind],
      ...(err.details.errors && { errors: err.details.errors }),
      ...(err.details.scope && { scope: err.details.scope }),
    },
  });
}

/** The cause beneath GraphQL's wrapping, or undefined for an error GraphQL itself raised. */
export function causeOf(error: unknown): unknown {
  let current = error;
  while (current instanceof GraphQLError) {
    if (!current.originalError) return undefined;
    current = current.originalError;
  }
  return current;
}

/** True for what must be masked: neither a DomainError nor an error of the GraphQL layer itself. */
export function isUnexpected(error: unknown): boolean {
  const cause = causeOf(error);
  return cause !== undefined && !(cause instanceof DomainError);
}

/** UNAVAILABLE, answered over HTTP with 503 and Retry-After (Yoga reads `extensions.http` and drops it). */
export function unavailableError(base?: GraphQLError): GraphQLError {
  return createGraphQLError(new DatabaseUnavailable().message, {
    nodes: base?.nodes,
    source: base?.source,
    positions: base?.positions,
    path: base?.path,
    extensions: { code: "UNAVAILABLE", http: { status: 503, headers: { "Retry-After": String(RETRY_AFTER_SECONDS) } } },
  });
}

/** Yoga's maskError: domain errors keep their message and code, the rest becomes "Unexpected error." */
export function maskError(error: unknown, message: string): Error {
  const cause = causeOf(error);
  if (cause instanceof DomainError)
    return domainErrorToGraphQL(cause, error instanceof GraphQLError ? error : undefined);
  if (isConnectionError(cause)) return unavailableError(error instanceof GraphQLError ? error : undefined);
  // Never dev mode: even with NODE_ENV=development no message or stack of the cause is shown.
  return yogaMaskError(error, message, false);
}
