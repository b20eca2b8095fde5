// Lists stay JSON arrays; the next page is announced in a Link header that keeps the filters.
import type Koa from "koa";
import { z } from "zod";
import { DEFAULT_LIMIT, MAX_LIMIT, parsePageRequest, type Page, type PageRequest } from "../domain/pagination.ts";
import { invalid } from "../errors.ts";

export const pageQueryShape = {
  limit: z.int().min(1).max(MAX_LIMIT).default(DEFAULT_LIMIT).describe("Page size"),
  cursor: z.string().optional().describe("Opaque cursor from a previous page's Link rel=next"),
};

export const pageRequestOf = (ctx: Koa.Context): PageRequest =>
  parsePageRequest({ limit: singleQuery(ctx, "limit"), cursor: singleQuery(ctx, "cursor") });

/** A query parameter that may appear once; repeated, it is a validation error. */
export function singleQuery(ctx: Koa.Context, name: string): string | undefined {
  const value = ctx.query[name];
  if (Array.isArray(value)) throw invalid("Invalid query parameters", [{ path: name, message: "Give it at most once" }]);
  return value;
}

/** `cursorParam`: the query parameter the next page's cursor goes in (`after` for the event log). */
export function sendPage<T, V>(ctx: Koa.Context, page: Page<T>, limit: number, view: (item: T) => V, cursorParam = "cursor"): void {
  linkNextPage(ctx, page, limit, cursorParam);
  ctx.body = page.items.map(view);
}

const [OPEN_ARRAY, COMMA, CLOSE_ARRAY] = [Buffer.from("["), Buffer.from(","), Buffer.from("]")];

/**
 * The same, each item already JSON text (`json`), encoded one by one and written as one buffer. A
 * page's single string (~200 KB for 500 events) cost more than the rest of the request: 1.1–1.4 ms
 * to join and 1.9 ms to encode, against 0.23 ms for the items encoded apart and concatenated
 * (bench/README.md).
 */
export function sendJsonTextPage<T>(ctx: Koa.Context, page: Page<T>, limit: number, json: (item: T) => string, cursorParam = "cursor"): void {
  linkNextPage(ctx, page, limit, cursorParam);
  const parts = [OPEN_ARRAY];
  for (const [n, item] of page.items.entries()) {
    if (n > 0) parts.push(COMMA);
    parts.push(Buffer.from(json(item)));
  }
  parts.push(CLOSE_ARRAY);
  ctx.type = "application/json";
  ctx.body = Buffer.concat(parts);
}

function linkNextPage(ctx: Koa.Context, page: Page<unknown>, limit: number, cursorParam: string): void {
  if (!page.nextCursor) return;
  const next = new URL(ctx.originalUrl, `${ctx.protocol}://${ctx.host || "localhost"}`);
  next.searchParams.set(cursorParam, page.nextCursor);
  next.searchParams.set("limit", String(limit));
  ctx.set("Link", `<${next.href}>; rel="next"`);
}
