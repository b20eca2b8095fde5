// DomainError kinds → extensions.code. Anything else is masked by Yoga (logged, never shown).
import { GraphQLError } from "graphql";
import { createGraphQLError, maskError as yogaMaskError } from "graphql-yoga";
import { DomainError, type ErrorKind } from "../errors.ts";

export const CODE_OF_KIND: Record<ErrorKind, string> = {
  invalid: "BAD_USER_INPUT",
  unauthenticated: "UNAUTHENTICATED",
  forbidden: "FORBIDDEN",
  not_found: "NOT_FOUND",
  conflict: "CONFLICT",
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

/** Yoga's maskError: domain errors keep their message and code, the rest becomes "Unexpected error." */
export function maskError(error: unknown, message: string, isDev?: boolean): Error {
  const original = error instanceof GraphQLError ? error.originalError : error;
  if (original instanceof DomainError) return domainErrorToGraphQL(original, error instanceof GraphQLError ? error : undefined);
  return yogaMaskError(error, message, isDev);
}
