// Shared input handling for every service: one place turns zod issues into field errors.
import { z } from "zod";
import { invalid, type FieldError } from "../errors.ts";

export function fieldPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, key) => {
    if (typeof key === "number") return `${acc}[${key}]`;
    return acc ? `${acc}.${String(key)}` : String(key);
  }, "");
}

export function toFieldErrors(error: z.ZodError): FieldError[] {
  return error.issues.flatMap((issue) =>
    issue.code === "unrecognized_keys"
      ? issue.keys.map((key) => ({ path: fieldPath([...issue.path, key]), message: "Unknown field" }))
      : [{ path: fieldPath(issue.path), message: issue.message }],
  );
}

/** Postgres text cannot hold U+0000; finding it here turns a database error into a 400. */
export const hasNul = (s: string): boolean => s.includes("\u0000");

/** Deeper input is refused before anything recursive (validation, the database driver) sees it. */
export const MAX_INPUT_DEPTH = 64;
// With the u flag a lone surrogate reads as a code point of category Cs; a valid pair does not.
const LONE_SURROGATE = /\p{Cs}/u;

function stringProblem(s: string): string | null {
  if (hasNul(s)) return "Must not contain U+0000";
  if (LONE_SURROGATE.test(s)) return "Must be valid Unicode text (it holds a lone UTF-16 surrogate)";
  return null;
}

/**
 * The first thing in a JSON value that no field may hold: nesting deeper than MAX_INPUT_DEPTH, or a
 * string or key that is not text Postgres can store (U+0000, a lone surrogate). Walks with its own
 * stack, so however deep the value, it cannot overflow the call stack. `at`: where the value sits
 * in the document it was taken from (its depth counts from there).
 */
export function unsafeInput(
  value: unknown,
  pathOf: (path: readonly PropertyKey[]) => string = fieldPath,
  at: readonly PropertyKey[] = [],
): FieldError | null {
  // Places, not paths: each value to visit is held by a container (its index among the containers
  // seen, -1 for the value itself) under a key, and a path is built only for the problem reported.
  // A 10,000-statement VEX holds some 100,000 values: a path for each came to 30 MB of garbage.
  // Both lists are flat, in threes, so that a small body costs two arrays.
  const stack: unknown[] = [value, -1, ""]; // value, holder, key
  const containers: unknown[] = []; // holder, key, depth
  const pathTo = (holder: number, key: PropertyKey): string => {
    const keys: PropertyKey[] = [];
    for (let h = holder, k = key; h !== -1; k = containers[3 * h + 1] as PropertyKey, h = containers[3 * h] as number)
      keys.push(k);
    return pathOf([...at, ...keys.reverse()]);
  };
  while (stack.length > 0) {
    const key = stack.pop() as PropertyKey;
    const holder = stack.pop() as number;
    const current = stack.pop();
    if (typeof current === "string") {
      const problem = stringProblem(current);
      if (problem) return { path: pathTo(holder, key), message: problem };
      continue;
    }
    if (typeof current !== "object" || current === null) continue;
    const depth = holder === -1 ? at.length : (containers[3 * holder + 2] as number) + 1;
    if (depth >= MAX_INPUT_DEPTH)
      return { path: pathTo(holder, key), message: `Must not be nested deeper than ${MAX_INPUT_DEPTH} levels` };
    const self = containers.push(holder, key, depth) / 3 - 1;
    // Children in reverse, so that they are visited in the document's order.
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push(current[i], self, i);
      continue;
    }
    const names = Object.keys(current);
    for (let i = names.length - 1; i >= 0; i--) {
      const name = names[i]!;
      const keyProblem = stringProblem(name);
      if (keyProblem) return { path: pathTo(self, name), message: keyProblem };
      stack.push((current as Record<string, unknown>)[name], self, name);
    }
  }
  return null;
}

/** Parses input against a schema or throws a validation DomainError listing every problem. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what = "Request body"): z.output<S> {
  const unsafe = unsafeInput(input);
  if (unsafe) throw invalid(`${what} is invalid`, [unsafe]);
  const result = schema.safeParse(input);
  if (!result.success) throw invalid(`${what} is invalid`, toFieldErrors(result.error));
  return result.data;
}

/** Fields the service assigns; sent in a body they are ignored (docs/spec/CONTRACT.md §2). */
export const READ_ONLY_FIELDS = ["id", "createdAt", "updatedAt"] as const;

/** A body must be a JSON object; read-only fields are dropped so a GET result can be PUT back. */
export function bodyObject(input: unknown, readOnly: readonly string[]): Record<string, unknown> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw invalid("Request body must be a JSON object", [{ path: "", message: "Expected a JSON object" }]);
  }
  const copy: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  for (const key of readOnly) delete copy[key];
  return copy;
}

// Field rules shared by several resources (docs/spec/CONTRACT.md §3).
export const nameField = z
  .string()
  .min(1, { message: "Must not be empty", abort: true })
  .max(200, "Must be at most 200 characters")
  .refine((s) => s.trim().length > 0, "Must not be blank")
  // The same rule for clients reading the document: ECMAScript's \s is exactly what trim() removes.
  .meta({ pattern: "\\S" });

/**
 * An absolute URL's start, spelled out (the scheme is case-insensitive) so that the document says
 * what the service checks: the WHATWG parser alone would also take `http:host` or `http:/host`.
 * Without `credentials`, no `user:password@` either.
 */
export const absoluteUrlPattern = (scheme: "http(s)" | "https", { credentials = true } = {}) =>
  `^[Hh][Tt][Tt][Pp]${scheme === "https" ? "[Ss]" : "[Ss]?"}://[^\\s/?#${credentials ? "" : "@"}]+(?:[/?#]|$)`;

const HTTP_URL = absoluteUrlPattern("http(s)");
const HTTP_URL_START = new RegExp(HTTP_URL);

export const httpUrlField = z
  .string()
  .max(2048, "Must be at most 2048 characters")
  .refine((s) => {
    if (!HTTP_URL_START.test(s)) return false;
    try {
      return new URL(s).hostname !== "";
    } catch {
      return false;
    }
  }, "Must be an absolute http(s) URL")
  .meta({ format: "uri", pattern: HTTP_URL });

export const severityField = z.enum(["low", "medium", "high", "critical"]);

/** The first instant Postgres and RFC 3339 share: RFC 3339 writes a year 0000, which Postgres has not. */
export const EARLIEST_INSTANT = new Date("0001-01-01T00:00:00Z");

/** `days` before `to`, or the earliest instant if that is before it. */
export const daysBefore = (to: Date, days: number): Date =>
  new Date(Math.max(EARLIEST_INSTANT.getTime(), to.getTime() - days * 86_400_000));

/** An instant of a query: ISO 8601 text with a time zone (REST), or already a date (GraphQL's DateTime). */
export const instantField = z
  .union([
    z.date(),
    z.iso
      .datetime({ offset: true, error: "Must be an ISO 8601 date-time, e.g. 2026-11-01T00:00:00Z" })
      .transform((s) => new Date(s)),
  ])
  .refine(
    (d) => d.getTime() >= EARLIEST_INSTANT.getTime() && d.getUTCFullYear() <= 9999,
    "Must be between 0001-01-01T00:00:00Z and the end of 9999",
  );
export type Severity = z.infer<typeof severityField>;

/** Severities from least to most severe: the one order policies and subscriptions compare by. */
export const SEVERITY_ORDER: readonly Severity[] = severityField.options;

/** True when `severity` is `min` or worse; an unknown severity is never. */
export function atLeast(severity: string, min: Severity): boolean {
  const rank = SEVERITY_ORDER.indexOf(severity as Severity);
  return rank >= 0 && rank >= SEVERITY_ORDER.indexOf(min);
}
