// Domain errors carry a stable code; each door maps the kind to its own vocabulary
// (REST: status + problem+json, GraphQL: extensions.code).

export type ErrorKind = "invalid" | "unauthenticated" | "forbidden" | "not_found" | "conflict";

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
export const forbidden = (scope: string) =>
  new DomainError("forbidden", `This operation needs the '${scope}' scope`, { scope });
