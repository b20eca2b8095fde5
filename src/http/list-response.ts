// Lists stay JSON arrays; the next page is announced in a Link header that keeps the filters.
import type Koa from "koa";
import { z } from "zod";
import { DEFAULT_LIMIT, MAX_LIMIT, parsePageRequest, type Page, type PageRequest } from "../domain/pagination.ts";
import { invalid } from "../errors.ts";
import { requestProtocol } from "./trusted-proxies.ts";

export const pageQueryShape = {
  limit: z.int().min(1).max(MAX_LIMIT).default(DEFAULT_LIMIT).describe("Page size"),
  cursor: z.string().optional().describe("Opaque cursor from a previous page's Link rel=next"),
};

export const pageRequestOf = (ctx: Koa.Context): PageRequest =>
  parsePageRequest({ limit: singleQuery(ctx, "limit"), cursor: singleQuery(ctx, "cursor") });

/** A query parameter that may appear once; repeated, it is a validation error. */
export function singleQuery(ctx: Koa.Context, name: string): string | undefined {
  const value = ctx.query[name];
  if (Array.isArray(value))
    throw invalid("Invalid query parameters", [{ path: name, message: "Give it at most once" }]);
  return value;
}

/** `cursorParam`: the query parameter the next page's cursor goes in (`after` for the event log). */
export function sendPage<T, V>(
  ctx: Koa.Context,
  page: Page<T>,
  limit: number,
  view: (item: T) => V,
  cursorParam = "cursor",
): void {
  linkNextPage(ctx, page.nextCursor, limit, cursorParam);
  ctx.body = page.items.map(view);
}

/**
 * The same, the page already a JSON array's text in pieces (`json`), written to the socket as they
 * are, in one write. Not as one Buffer for Koa to send: a page's buffer (~200 KB, outside V8's heap)
 * made V8 start a mark-compact every 30 pages or so, none when the strings are written
 * (bench/notes/2026-11-28-get-events-strings.md). Koa then leaves the response alone
 * (`respond = false`), so this comes last.
 */
export function sendJsonArray(
  ctx: Koa.Context,
  nextCursor: string | null,
  limit: number,
  json: readonly string[],
  cursorParam = "cursor",
): void {
  linkNextPage(ctx, nextCursor, limit, cursorParam);
  ctx.status = 200;
  ctx.type = "application/json";
  ctx.length = json.reduce((size, piece) => size + Buffer.byteLength(piece), 0);
  ctx.respond = false;
  ctx.res.cork();
  for (const piece of json) ctx.res.write(piece);
  ctx.res.end();
  ctx.res.uncork();
}

function linkNextPage(ctx: Koa.Context, nextCursor: string | null, limit: number, cursorParam: string): void {
  if (!nextCursor) return;
  const next = new URL(ctx.originalUrl, `${requestProtocol(ctx)}://${ctx.host || "localhost"}`);
  next.searchParams.set(cursorParam, nextCursor);
  next.searchParams.set("limit", String(limit));
  ctx.set("Link", `<${next.href}>; rel="next"`);
}
