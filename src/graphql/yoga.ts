// GraphQL over HTTP (queries, mutations, SSE subscriptions) at /graphql, mounted in Koa with no
// body parser in front: Yoga reads the request itself. The same Yoga instance serves graphql-ws
// (ws.ts) through `yoga.getEnveloped`, so both transports share plugins, limits and context.
import { Readable } from "node:stream";
import { onTokenExpiry } from "../auth/token-expiry.ts";
import { createYoga, type YogaServerInstance } from "graphql-yoga";
import type Koa from "koa";
import type { Actor } from "../auth/scopes.ts";
import { RETRY_AFTER_SECONDS, type DatabaseHealth } from "../db/database-health.ts";
import type { ServiceContext } from "../domain/context.ts";
import type { EventBus } from "../events/pubsub.ts";
import { restBesideLive } from "../events/replay-pacing.ts";
import { hasBody, readBodyText } from "../http/json-body.ts";
import type { LiveStreams } from "../http/live-streams.ts";
import { wwwAuthenticate } from "../http/middleware/errors.ts";
import { GRAPHIQL_CSP } from "../http/middleware/security-headers.ts";
import type { Logger } from "../log.ts";
import { BatcherRegistry } from "./batch.ts";
import { compiledQueries } from "./compiled-queries.ts";
import type { GraphQLContext } from "./context.ts";
import { errorLoggingPlugin } from "./error-logging.ts";
import { renderLocalGraphiQL } from "./graphiql.ts";
import { maskError } from "./errors.ts";
import { uncoercibleVariablesRefused, unparsableParamsAsBadRequest, unsafeVariablesRefused } from "./hostile-params.ts";
import { armorPlugin } from "./limits.ts";
import { PerApplicationBatch } from "./per-application-batch.ts";
import { schema } from "./schema.ts";
import { sharedSubscriptions } from "./shared-subscriptions.ts";
import { sseWithEventIds } from "./sse.ts";
import { requestProtocol } from "../http/trusted-proxies.ts";

export const GRAPHQL_PATH = "/graphql";

/** What a transport hands Yoga: the caller and the service context for them. */
export interface GraphQLServerContext {
  actor: Actor | undefined;
  service: ServiceContext;
  /** SSE: the cursor a reconnecting EventSource resumes after. */
  lastEventId?: string;
}

export type GraphQLYoga = YogaServerInstance<GraphQLServerContext, GraphQLContext>;

export function createGraphqlServer(deps: {
  production: boolean;
  events: EventBus;
  log: Logger;
  health?: DatabaseHealth;
}): GraphQLYoga {
  const replayRest = restBesideLive(deps.events.lastDeliveredAt);
  return createYoga<GraphQLServerContext, GraphQLContext>({
    schema,
    graphqlEndpoint: GRAPHQL_PATH,
    graphiql: deps.production ? false : { subscriptionsProtocol: "WS" },
    renderGraphiQL: renderLocalGraphiQL,
    landingPage: false,
    // Yoga's default answers any Origin with credentials allowed. The console is same-origin and
    // REST sends no CORS headers either: other sites' pages get nothing from the API.
    cors: false,
    // graphqlMiddleware has read the body under REST's 1 MiB ceiling already. Yoga's own limit
    // would pipe every body through a stream again, and Node's pipeline allocates an AbortError
    // (a stack trace) each time: a fifth of a small query's CPU.
    maxRequestBodySize: false,
    maskedErrors: { maskError, isDev: false },
    logging: false, // errorLoggingPlugin logs what is masked, with the request's logger
    plugins: [
      armorPlugin(deps.production),
      unparsableParamsAsBadRequest(),
      unsafeVariablesRefused(),
      uncoercibleVariablesRefused(),
      errorLoggingPlugin(deps.log, deps.health),
      compiledQueries(),
      sharedSubscriptions(),
      sseWithEventIds(),
    ],
    context: ({ actor, service, lastEventId }) => ({
      actor,
      service,
      lastEventId,
      events: deps.events,
      replayRest,
      batch: new BatcherRegistry(),
      perApplication: new PerApplicationBatch(service),
    }),
  });
}

/** GraphiQL is a page the browser loads without a token; the operations it sends need one. */
const wantsGraphiQL = (ctx: Koa.Context) =>
  ctx.method === "GET" && ctx.get("Accept").includes("text/html") && !ctx.query.query;

// Connection management belongs to Node's server, which honours the client's `Connection: close`;
// Yoga's streaming answers say `Connection: keep-alive`, which copied over would keep it open.
const HOP_BY_HOP_HEADERS = new Set(["connection", "keep-alive", "transfer-encoding"]);

/** Streamed as it comes (SSE subscriptions stay open): the ponyfilled body's own Node stream when it has one. */
function nodeStream(body: ReadableStream<Uint8Array>): Readable {
  const ponyfilled = (body as { readable?: unknown }).readable;
  return ponyfilled instanceof Readable ? ponyfilled : Readable.from(body as unknown as AsyncIterable<Uint8Array>);
}

function requestHeaders(ctx: Koa.Context): [string, string][] {
  return Object.entries(ctx.headers).flatMap(([name, value]) =>
    value === undefined ? [] : [value].flat().map((v): [string, string] => [name, v]),
  );
}

export function graphqlMiddleware(
  yoga: GraphQLYoga,
  serviceContext: (ctx: Koa.Context) => ServiceContext,
  options: { graphiql: boolean; liveStreams: LiveStreams; health?: Pick<DatabaseHealth, "available"> },
): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.path !== GRAPHQL_PATH) return next();
    if (!ctx.state.actor && !(options.graphiql && wantsGraphiQL(ctx))) {
      // docs/spec/CONTRACT.md §1: 401 with a GraphQL error body, before anything about the operation is looked at.
      const authError = ctx.state.authError;
      ctx.status = 401;
      ctx.set("WWW-Authenticate", authError ? wwwAuthenticate(authError) : "Bearer");
      ctx.type = "application/graphql-response+json";
      ctx.body = {
        errors: [
          {
            message: authError?.message ?? "A valid bearer token is required",
            extensions: { code: "UNAUTHENTICATED" },
          },
        ],
      };
      return;
    }
    if (options.health && !options.health.available() && !wantsGraphiQL(ctx)) {
      // Operations need the database; while it is down they are answered at once (docs/spec/CONTRACT.md §15).
      ctx.status = 503;
      ctx.set("Retry-After", String(RETRY_AFTER_SECONDS));
      ctx.type = "application/graphql-response+json";
      ctx.body = {
        errors: [{ message: "The database cannot be reached; try again shortly", extensions: { code: "UNAVAILABLE" } }],
      };
      return;
    }
    // Read here so the REST body ceiling (1 MiB, chunked or not) holds; the query itself is
    // further bounded by the token limit.
    const body = hasBody(ctx) ? await readBodyText(ctx) : undefined;
    const url = new URL(ctx.originalUrl, `${requestProtocol(ctx)}://${ctx.host || "localhost"}`);
    const response = await yoga.fetch(
      url,
      { method: ctx.method, headers: requestHeaders(ctx), body },
      { actor: ctx.state.actor, service: serviceContext(ctx), lastEventId: ctx.get("Last-Event-ID") || undefined },
    );
    ctx.status = response.status;
    response.headers.forEach((value, key) => {
      if (!HOP_BY_HOP_HEADERS.has(key.toLowerCase())) ctx.set(key, value);
    });
    const contentType = response.headers.get("content-type") ?? "";
    if (contentType.startsWith("text/html")) ctx.set("Content-Security-Policy", GRAPHIQL_CSP);
    if (!response.body) return;
    if (!/^(text\/event-stream|multipart\/)/.test(contentType)) {
      // A whole answer (JSON) goes out in one write with its length, not as a piped stream.
      ctx.body = Buffer.from(await response.arrayBuffer());
      return;
    }
    const stream = nodeStream(response.body);
    // Yoga's event-stream and multipart bodies throw from `cancel` when destroyed before their first
    // read (a HEAD request, a client gone before the answer was ready). Nothing is lost then, but the
    // error, unheard, would end the process.
    stream.on("error", (err) => ctx.state.log.debug({ err }, "GraphQL response stream ended with an error"));
    ctx.body = stream;
    if (ctx.state.actor && contentType.startsWith("text/event-stream")) {
      // Like a graphql-ws socket, an event stream ends when the token that opened it expires, and
      // at shutdown; ending the source also ends the subscription behind it.
      const end = () => {
        stream.unpipe(ctx.res);
        stream.destroy();
        ctx.res.end();
      };
      const cancel = onTokenExpiry(ctx.state.actor.exp, end);
      const forget = options.liveStreams.add(end);
      ctx.res.once("close", () => {
        cancel();
        forget();
      });
    }
  };
}
