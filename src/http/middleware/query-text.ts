// Query parameters are text like any other field (docs/spec/CONTRACT.md §2): a name or value that is not
// percent-encoded UTF-8 (a broken escape, an encoded lone surrogate such as %ED%A0%80), or that holds
// U+0000, is a 400 naming the parameter, on every route. Left alone, Koa would decode it to U+FFFD
// and the request would quietly ask for something else.
import type Koa from "koa";
import { unsafeInput } from "../../domain/validation.ts";
import type { FieldError } from "../../errors.ts";
import { HttpProblem, problem } from "../problem.ts";

const NOT_UTF8 = "Must be percent-encoded UTF-8 text";

function decode(part: string): string | null {
  try {
    return decodeURIComponent(part.replaceAll("+", " "));
  } catch {
    return null; // URIError: a malformed escape, or bytes that are not UTF-8
  }
}

export function queryStringProblem(query: string): FieldError | null {
  if (query === "") return null;
  for (const pair of query.split("&")) {
    const eq = pair.indexOf("=");
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    const name = decode(rawName);
    if (name === null) return { path: rawName, message: NOT_UTF8 };
    const value = eq < 0 ? "" : decode(pair.slice(eq + 1));
    if (value === null) return { path: name, message: NOT_UTF8 };
    const unsafe = unsafeInput({ [name]: value });
    if (unsafe) return unsafe;
  }
  return null;
}

/**
 * `tokenFirst`: whether the request goes to a door that answers 401 without a valid token before
 * it reads anything (docs/spec/CONTRACT.md §1): its query is left to that door, so a caller
 * without a token learns nothing from it.
 */
export function requireTextQuery(tokenFirst: (ctx: Koa.Context) => boolean): Koa.Middleware {
  return async (ctx, next) => {
    if (!ctx.state.actor && tokenFirst(ctx)) return next();
    const error = queryStringProblem(ctx.querystring);
    if (error) throw new HttpProblem(problem("validation_failed", "The query string is invalid", [error]));
    await next();
  };
}
