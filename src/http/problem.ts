// RFC 9457 problem details: the body of every error answer.
import type { FieldError } from "../errors.ts";

export type ProblemCode =
  | "validation_failed"
  | "malformed_json"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "method_not_allowed"
  | "payload_too_large"
  | "unsupported_media_type"
  | "rate_limited"
  | "internal"
  | "cursor_expired"
  | "unavailable"
  | "tool_failed";

const TITLES: Record<ProblemCode, [status: number, title: string]> = {
  validation_failed: [400, "Validation failed"],
  malformed_json: [400, "Malformed JSON"],
  unauthorized: [401, "Unauthorized"],
  forbidden: [403, "Forbidden"],
  not_found: [404, "Not found"],
  conflict: [409, "Conflict"],
  method_not_allowed: [405, "Method not allowed"],
  payload_too_large: [413, "Payload too large"],
  unsupported_media_type: [415, "Unsupported media type"],
  rate_limited: [429, "Too many requests"],
  internal: [500, "Internal server error"],
  cursor_expired: [410, "Cursor expired"],
  unavailable: [503, "Service unavailable"],
  tool_failed: [422, "The report says the tool failed"],
};

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  errors?: FieldError[];
}

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

export function problem(code: ProblemCode, detail: string, errors?: FieldError[]): Problem {
  const [status, title] = TITLES[code];
  return { type: `/problems/${code}`, title, status, detail, code, ...(errors && { errors }) };
}

/** An error that is already an HTTP answer (raised by the HTTP layer itself, not the domain). */
export class HttpProblem extends Error {
  constructor(
    readonly problem: Problem,
    readonly headers: Record<string, string> = {},
  ) {
    super(problem.detail);
  }
}

export const httpProblem = (code: ProblemCode, detail: string, headers?: Record<string, string>) =>
  new HttpProblem(problem(code, detail), headers);
