// Lists stay JSON arrays; the next page is announced in a Link header that keeps the filters.
import type Koa from "koa";
import { z } from "zod";
import type { Page } from "../domain/pagination.ts";
import { parsePageRequest, type PageRequest } from "../domain/pagination.ts";
import { invalid } from "../errors.ts";

export const pageQueryShape = {
  limit: z.string().optional().describe("Page size, 1–500 (default 100)"),
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

export function sendPage<T, V>(ctx: Koa.Context, page: Page<T>, limit: number, view: (item: T) => V): void {
  if (page.nextCursor) {
    const next = new URL(ctx.originalUrl, `${ctx.protocol}://${ctx.host || "localhost"}`);
    next.searchParams.set("cursor", page.nextCursor);
    next.searchParams.set("limit", String(limit));
    ctx.set("Link", `<${next.href}>; rel="next"`);
  }
  ctx.body = page.items.map(view);
}
