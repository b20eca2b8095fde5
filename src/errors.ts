// Domain errors carry a stable code; each door maps the kind to its own vocabulary
// (REST: status + problem+json, GraphQL: extensions.code).

/**
 * `expired`: an event cursor older than what retention keeps (docs/spec/CONTRACT.md §14). `tool_failed`: a
 * well-formed scanner report that says its tool failed, which can complete no scan (docs/spec/CONTRACT.md §11).
 */
export type ErrorKind =
  "invalid" | "unauthenticated" | "forbidden" | "not_found" | "conflict" | "expired" | "tool_failed";

export interface FieldError {
  path: string;
  message: string;
}

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly details: { errors?: FieldError[]; scope?: string; reason?: string } = {},
  ) {
    super(message);
    this.name = "DomainError";
  }
}

export const invalid = (message: string, errors?: FieldError[]) => new DomainError("invalid", message, { errors });
export const notFound = (what: string) => new DomainError("not_found", `${what} not found`);
export const conflict = (message: string) => new DomainError("conflict", message);
export const cursorExpired = () =>
  new DomainError(
    "expired",
    "The cursor is older than the events kept (EVENT_RETENTION_DAYS); read again from the oldest kept, without it",
  );
/** `errors[].path`: JSON Pointers to where the report says so. */
export const toolFailed = (message: string, errors: FieldError[]) =>
  new DomainError("tool_failed", message, { errors });
export const forbidden = (scope: string) =>
  new DomainError("forbidden", `This operation needs the '${scope}' scope`, { scope });
/** A change the caller's teams do not allow (docs/spec/CONTRACT.md §17): never for what it may not see (that is 404). */
export const outsideTeams = (message: string) => new DomainError("forbidden", message);
