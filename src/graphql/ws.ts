// graphql-ws (graphql-transport-ws) on the HTTP server's /graphql path. Operations run through
// `yoga.getEnveloped`, so they get the same plugins (limits, error masking) and context as HTTP.
// Auth: the bearer token travels in connection_init; a missing or bad one, or its expiry while the
// socket is open, closes the socket with 4403 (graphql-ws's Forbidden). A client that stops reading
// is closed with 1008 (stalled-sockets.ts). At shutdown every socket is closed with 1001 (going away).
import type http from "node:http";
import { GraphQLError } from "graphql";
import { CloseCode } from "graphql-ws";
import { useServer } from "graphql-ws/use/ws";
import { WebSocketServer } from "ws";
import type { Actor } from "../auth/scopes.ts";
import { onTokenExpiry } from "../auth/token-expiry.ts";
import type { TokenVerifier } from "../auth/verify-token.ts";
import type { ServiceContext } from "../domain/context.ts";
import { MAX_BODY_BYTES } from "../http/json-body.ts";
import { batchWrites } from "./batched-writes.ts";
import { closeWhenStalled } from "./stalled-sockets.ts";
import { GRAPHQL_PATH, type GraphQLYoga } from "./yoga.ts";

export interface GraphqlWsDeps {
  yoga: GraphQLYoga;
  verifyToken: TokenVerifier;
  serviceContext: (actor: Actor) => ServiceContext;
  /** Unsent bytes a socket may hold before its client counts as stalled and is closed. */
  maxBufferedBytes: number;
}

/** Buffered bytes under which a send is acknowledged before it is written (batched-writes.ts); at most a quarter of the stall limit. */
const ACKNOWLEDGE_BELOW_BYTES = 256 * 1024;

interface ConnectionState {
  actor?: Actor;
}

function bearerOf(payload: Record<string, unknown> | undefined): string | undefined {
  const value = payload?.authorization ?? payload?.Authorization;
  return typeof value === "string" ? value : undefined;
}

export interface GraphqlWsServer {
  /** Sockets open now. */
  readonly connections: number;
  /** Closes every socket with 1001 "Going away", so clients reconnect (elsewhere); resolves once all are closed. */
  close(): Promise<void>;
}

/** Attaches graphql-ws to `server`. */
export function attachGraphqlWs(server: http.Server, deps: GraphqlWsDeps): GraphqlWsServer {
  // Messages are read whole before anyone is authenticated: the HTTP body ceiling holds here too.
  const wss = new WebSocketServer({ server, path: GRAPHQL_PATH, maxPayload: MAX_BODY_BYTES });
  const states = new WeakMap<object, ConnectionState>();
  wss.on("connection", (socket) => {
    batchWrites(socket, Math.min(ACKNOWLEDGE_BELOW_BYTES, Math.floor(deps.maxBufferedBytes / 4)));
    closeWhenStalled(socket, deps.maxBufferedBytes);
  });

  const disposable = useServer(
    {
      onConnect: async (ctx) => {
        const state: ConnectionState = {};
        states.set(ctx.extra.socket, state);
        try {
          state.actor = await deps.verifyToken(bearerOf(ctx.connectionParams));
        } catch {
          return false; // → 4403 Forbidden
        }
        const socket = ctx.extra.socket;
        socket.once(
          "close",
          onTokenExpiry(state.actor.exp, () => socket.close(CloseCode.Forbidden, "Token expired")),
        );
        return true;
      },
      execute: (args) => (args.rootValue as Enveloped).execute(args),
      subscribe: (args) => (args.rootValue as Enveloped).subscribe(args),
      onSubscribe: async (ctx, _id, payload) => {
        const actor = states.get(ctx.extra.socket)?.actor;
        // graphql-ws runs onSubscribe only after onConnect accepted the socket, which set the actor.
        if (!actor)
          return [new GraphQLError("A valid bearer token is required", { extensions: { code: "UNAUTHENTICATED" } })];
        const enveloped = deps.yoga.getEnveloped({ actor, service: deps.serviceContext(actor) });
        let document;
        try {
          document = enveloped.parse(payload.query);
        } catch (err) {
          return [err as GraphQLError];
        }
        const errors = enveloped.validate(enveloped.schema, document);
        if (errors.length) return errors;
        return {
          schema: enveloped.schema,
          document,
          operationName: payload.operationName,
          variableValues: payload.variables,
          contextValue: await enveloped.contextFactory(),
          rootValue: { execute: enveloped.execute, subscribe: enveloped.subscribe },
        };
      },
    },
    wss,
  );

  return {
    get connections() {
      return wss.clients.size;
    },
    async close() {
      await disposable.dispose();
    },
  };
}

type Enveloped = ReturnType<GraphQLYoga["getEnveloped"]>;
