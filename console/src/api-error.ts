// What went wrong, as the API said it: a REST problem (RFC 9457) or GraphQL errors, never a
// generic "something went wrong".
import type { CombinedError } from "@urql/core";

export interface FieldError {
  path: string;
  message: string;
}

export interface ApiError {
  title: string;
  detail?: string;
  fieldErrors?: FieldError[];
  /** HTTP status when there was an answer. */
  status?: number;
}

export interface Problem {
  title?: string;
  status?: number;
  detail?: string;
  errors?: FieldError[];
}

const TITLES: Record<string, string> = {
  BAD_USER_INPUT: "Invalid input",
  UNAUTHENTICATED: "Unauthorized",
  FORBIDDEN: "Forbidden",
  NOT_FOUND: "Not found",
  CONFLICT: "Conflict",
  GRAPHQL_VALIDATION_FAILED: "Query refused",
};

export function fromProblem(problem: Problem, status: number): ApiError {
  return {
    title: problem.title ?? `HTTP ${status}`,
    detail: problem.detail,
    fieldErrors: problem.errors,
    status,
  };
}

export function fromCombinedError(error: CombinedError): ApiError {
  const status = error.response?.status as number | undefined;
  const first = error.graphQLErrors[0];
  if (!first) {
    return { title: "The service could not be reached", detail: error.networkError?.message ?? error.message, status };
  }
  const code = first.extensions?.code as string | undefined;
  const fieldErrors = error.graphQLErrors.flatMap((e) => (e.extensions?.errors as FieldError[] | undefined) ?? []);
  return {
    title: (code && TITLES[code]) ?? "The service answered with an error",
    detail: error.graphQLErrors.map((e) => e.message).join("; "),
    fieldErrors: fieldErrors.length ? fieldErrors : undefined,
    status,
  };
}
