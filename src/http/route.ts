// A REST operation is declared once: the same definition mounts the Koa route and writes its
// OpenAPI entry, so /openapi.json cannot drift from what the router serves.
import type Router from "@koa/router";
import type Koa from "koa";
import type { z } from "zod";
import { requireAnyScope, requireScope, type Scope } from "../auth/scopes.ts";
import type { DatabaseHealth } from "../db/database-health.ts";
import type { ServiceContext } from "../domain/context.ts";
import { requireAuthenticated } from "./middleware/authenticate.ts";
import type { ApiTag } from "./api-tags.ts";

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

export interface RouteDefinition {
  operationId: string;
  method: HttpMethod;
  /** OpenAPI-style path, e.g. /applications/{id}. */
  path: string;
  summary: string;
  description: string;
  tag: ApiTag;
  /** The scope the service demands; also checked before the handler reads a body. */
  scope?: Scope;
  /** Instead of `scope`: the operation needs one of these (the service decides which, from the request). */
  anyScope?: readonly Scope[];
  /** No token needed (health, metrics, the OpenAPI document itself). */
  public?: boolean;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** The body may be left out. */
  bodyOptional?: boolean;
  /** Fields of a resource's view the body may carry back, ignored (a GET result can be sent back). */
  bodyReadOnly?: readonly ("id" | "createdAt" | "updatedAt")[];
  /** Media types the body may come as (default application/json). */
  bodyMediaTypes?: readonly string[];
  success: {
    status: number;
    description: string;
    schema?: z.ZodType;
    contentType?: string;
    /** Other media types it may answer with, with the same schema (chosen by the request). */
    alsoAs?: readonly string[];
    /** Response headers worth documenting, e.g. Location or Link. */
    headers?: string[];
    /** When the operation may also answer 204 (no content): what that means. */
    orNoContent?: string;
  };
  /** Error statuses beyond the ones every protected operation has (401, 403, 429, 500, 503). */
  errors: number[];
  /** Error statuses that may also answer with a JSON body of their own, beside a problem. */
  errorBodies?: Record<number, z.ZodType>;
  handle(ctx: Koa.Context, svc: ServiceContext): Promise<void>;
}

export const koaPath = (openApiPath: string) => openApiPath.replace(/\{(\w+)\}/g, ":$1");

/** The paths an OpenAPI-style path names, matched exactly (case and trailing slash), as the router does. */
export function pathPattern(openApiPath: string): RegExp {
  const escaped = openApiPath.replace(/[.*+?^$()|[\]\\]/g, "\\$&");
  return new RegExp(`^${escaped.replace(/\{\w+\}/g, "[^/]+")}$`);
}

/** Whether a method and path (matched exactly, as the router does) name a route that needs a token. */
export function protectedRouteMatcher(routes: readonly RouteDefinition[]): (method: string, path: string) => boolean {
  const patterns = routes.filter((r) => !r.public).map((r) => ({ method: r.method, path: pathPattern(r.path) }));
  return (method, path) => {
    const asked = method === "HEAD" ? "GET" : method;
    return patterns.some((p) => p.method === asked && p.path.test(path));
  };
}

export function mountRoutes(
  router: Router,
  routes: readonly RouteDefinition[],
  serviceContext: (ctx: Koa.Context) => ServiceContext,
  health?: Pick<DatabaseHealth, "require">,
): void {
  for (const route of routes) {
    router.register(koaPath(route.path), [route.method], async (ctx: Koa.Context) => {
      if (!route.public) requireAuthenticated(ctx);
      // The service checks it again (it is the authority, for every door); checking here as well
      // answers 403 before a body is read from a caller who may not write.
      if (route.scope) requireScope(ctx.state.actor, route.scope);
      if (route.anyScope) requireAnyScope(ctx.state.actor, route.anyScope);
      // Every protected operation needs the database: while it is down, 503 at once.
      if (!route.public) health?.require();
      await route.handle(ctx, serviceContext(ctx));
    });
  }
}
