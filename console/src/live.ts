// The live-data layer: the one graphql-ws connection of a session, and every subscription the
// views open on it. Views never talk to the socket themselves, so how a subscription resumes is
// decided here alone.
//
// Every subscription resumes (docs/spec/CONTRACT.md §14): it remembers the `cursor` of the last payload it got,
// and when the socket comes back after a drop it subscribes again with `after: <cursor>`, so the
// service first replays what was committed meanwhile, in order, then goes on live; the views apply
// replayed payloads as they apply live ones. graphql-ws would re-send each subscription as it was
// first sent, so this module takes them off the dropped socket itself and opens them anew. A
// subscription starts from the log's head (`eventLogHead`, asked on the socket first), so it has a
// cursor before its first payload. One that cannot resume (the service refuses its cursor:
// CURSOR_EXPIRED, past retention) subscribes again from the head and asks its view to refetch
// (`onStale`); so does one whose head could not be read.
import { stringifyDocument } from "@urql/core";
import type { TadaDocumentNode } from "gql.tada";
import { createClient, type Client } from "graphql-ws";
import { createContext } from "preact";
import { useContext, useEffect, useRef, useState } from "preact/hooks";
import type { ApiError } from "./api-error.ts";

export type LiveStatus = "connecting" | "live" | "reconnecting";

/**
 * What the socket's latest return brought: the payloads the resumed subscriptions received in the
 * burst that followed it (the replay of what happened meanwhile), and the subscriptions that could
 * not resume and had their views refetch instead. Settled once a second passed with nothing more.
 */
export interface CatchUp {
  /** Subscriptions open when the socket came back. */
  subscriptions: number;
  changes: number;
  refetched: number;
  settled: boolean;
}

/** The quiet after a reconnection (or its last replayed payload) that ends its catch-up burst. */
const CATCH_UP_QUIET_MS = 1000;

/** graphql-ws's Forbidden: the token was refused or expired while the socket was open. */
const FORBIDDEN = 4403;

/**
 * Every subscription document of the console: one root field whose payload carries its event's
 * cursor, and an `$after` variable (enforced here by the types, so a document without them does not
 * build).
 */
type Resumable = Record<string, { cursor: string }>;
type ResumeVariables = { after?: string | null };

export interface SubscriptionHandlers<D> {
  onData: (data: D) => void;
  onError: (error: ApiError) => void;
  /** The subscription could not resume after a drop: what the view shows may be out of date. */
  onStale: () => void;
}

export interface LiveConnection {
  subscribe<D extends Resumable, V extends ResumeVariables>(
    document: TadaDocumentNode<D, V>,
    variables: NoInfer<V>,
    handlers: SubscriptionHandlers<NoInfer<D>>,
  ): () => void;
  /** Called after the socket came back from a drop (not on the first connection). */
  onReconnect(listener: () => void): () => void;
  status(): LiveStatus;
  onStatus(listener: (status: LiveStatus) => void): () => void;
  catchUp(): CatchUp | null;
  onCatchUp(listener: (catchUp: CatchUp | null) => void): () => void;
  /**
   * The session's token was renewed: the socket reconnects with it before the old one expires (the
   * service closes a socket when its token does). Subscriptions resume from their cursors as after
   * a drop, but quietly: no "reconnecting", no catch-up notice, no refetch.
   */
  renew(): void;
  dispose(): void;
}

interface Active {
  query: string;
  variables: Record<string, unknown>;
  handlers: SubscriptionHandlers<Resumable>;
  /** The cursor of the last payload received; none before the first. */
  cursor?: string;
  /** Whether the current graphql-ws subscription was opened with `after`. */
  resumed: boolean;
  /** Asking for the head before (re)opening: a reconnection meanwhile must not open it twice. */
  opening?: boolean;
  /** Ends the current graphql-ws subscription; none while it is off a dropped socket. */
  release?: () => void;
}

const HEAD = "query EventLogHead { eventLogHead }";

/** Codes with which the service refuses a resumed subscription's cursor (see the note in `open`). */
const REFUSED_CURSOR = new Set(["CURSOR_EXPIRED", "BAD_USER_INPUT"]);

export function createLiveConnection(token: () => string | null, onRefused: (reason: string) => void): LiveConnection {
  let status: LiveStatus = "connecting";
  let catchUp: CatchUp | null = null;
  const statusListeners = new Set<(status: LiveStatus) => void>();
  const catchUpListeners = new Set<(catchUp: CatchUp | null) => void>();
  const reconnectListeners = new Set<() => void>();
  const active = new Set<Active>();
  /** A reconnection asked for by renew(), not a drop. */
  let renewing = false;
  const setStatus = (next: LiveStatus) => {
    if (next === status) return;
    status = next;
    statusListeners.forEach((l) => l(next));
  };
  const setCatchUp = (next: CatchUp | null) => {
    catchUp = next;
    catchUpListeners.forEach((l) => l(next));
  };
  let quiet: ReturnType<typeof setTimeout> | undefined;
  const startCatchUp = () => {
    clearTimeout(quiet);
    setCatchUp({ subscriptions: active.size, changes: 0, refetched: 0, settled: false });
    quiet = setTimeout(settle, CATCH_UP_QUIET_MS);
  };
  const settle = () => catchUp && setCatchUp({ ...catchUp, settled: true });
  const counted = (field: "changes" | "refetched") => {
    if (!catchUp || catchUp.settled) return;
    setCatchUp({ ...catchUp, [field]: catchUp[field] + 1 });
    clearTimeout(quiet);
    quiet = setTimeout(settle, CATCH_UP_QUIET_MS);
  };

  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/graphql`;
  const client: Client = createClient({
    url,
    // Read at every (re)connection: after a renewal the socket comes back with the new token.
    connectionParams: () => ({ authorization: `Bearer ${token()}` }),
    lazy: false,
    keepAlive: 10_000,
    retryAttempts: Number.MAX_SAFE_INTEGER,
    // Quick at first (a restarted service is back in a second), then backing off to 10 s.
    retryWait: (retries) =>
      new Promise((resolve) => setTimeout(resolve, Math.min(10_000, 250 * 2 ** retries) * (0.75 + Math.random() / 2))),
    shouldRetry: (event) => (event as CloseEvent | undefined)?.code !== FORBIDDEN,
    onNonLazyError: () => {},
    on: {
      connected: (_socket, _payload, wasRetry) => {
        if (renewing) {
          renewing = false;
          for (const sub of active) if (!sub.release) reopen(sub);
          return setStatus("live");
        }
        if (wasRetry) {
          startCatchUp();
          for (const sub of active) if (!sub.release) reopen(sub);
        }
        setStatus("live");
        if (wasRetry) reconnectListeners.forEach((l) => l());
      },
      closed: (event) => {
        if ((event as CloseEvent).code === FORBIDDEN)
          return onRefused("The service closed the live connection: the token was refused or has expired.");
        if (!renewing) {
          setStatus("reconnecting");
          clearTimeout(quiet);
          setCatchUp(null);
        }
        // Off the dropped socket, so that graphql-ws does not re-send them as they were first sent.
        for (const sub of active) {
          sub.release?.();
          sub.release = undefined;
        }
      },
    },
  });

  /** The cursor of the log's head, asked on the socket; undefined when it cannot be had. */
  function head(): Promise<string | undefined> {
    return new Promise((resolve) => {
      let cursor: string | undefined;
      client.subscribe<{ eventLogHead: string }>(
        { query: HEAD },
        {
          next: (result) => (cursor = result.data?.eventLogHead),
          error: () => resolve(undefined),
          complete: () => resolve(cursor),
        },
      );
    });
  }

  /** Opens the subscription from the log's head, which becomes its cursor; from now without one if the head cannot be had. */
  function openFromHead(sub: Active) {
    sub.opening = true;
    void head().then((cursor) => {
      sub.opening = false;
      if (!active.has(sub) || sub.release) return;
      sub.cursor = cursor;
      open(sub, cursor);
    });
  }

  /** Subscribes again after a drop: from its cursor when it has one, else from the head with a refetch. */
  function reopen(sub: Active) {
    if (sub.opening) return;
    if (sub.cursor !== undefined) return open(sub, sub.cursor);
    openFromHead(sub);
    counted("refetched");
    sub.handlers.onStale();
  }

  function open(sub: Active, after: string | undefined) {
    sub.resumed = after !== undefined;
    const release = client.subscribe<Resumable>(
      { query: sub.query, variables: { ...sub.variables, after: after ?? null } },
      {
        next: (result) => {
          if (sub.release !== release) return; // a payload of a subscription already taken off
          if (result.errors?.length) {
            const codes = result.errors.map((e) => e.extensions?.code);
            // The same variables were accepted before; resumed, only `after` can be what is refused
            // (expired, or from a log this service no longer has).
            if (sub.resumed && codes.some((c) => REFUSED_CURSOR.has(c as string))) {
              sub.release = undefined;
              sub.cursor = undefined;
              return reopen(sub);
            }
            onSubscriptionError(sub, result.errors);
          } else if (result.data) {
            const payload = Object.values(result.data)[0];
            if (payload?.cursor) sub.cursor = payload.cursor;
            if (sub.resumed) counted("changes");
            sub.handlers.onData(result.data);
          }
        },
        error: () => {},
        complete: () => {},
      },
    );
    sub.release = release;
  }

  function onSubscriptionError(
    sub: Active,
    errors: readonly { message: string; extensions?: Record<string, unknown> }[],
  ) {
    const first = errors[0]!;
    sub.handlers.onError({
      title: "The subscription was refused",
      detail: errors.map((e) => e.message).join("; "),
      status: first.extensions?.code === "FORBIDDEN" ? 403 : undefined,
    });
  }

  return {
    subscribe(document, variables, handlers) {
      const sub: Active = {
        query: stringifyDocument(document),
        variables: { ...(variables as Record<string, unknown>) },
        handlers: handlers as unknown as SubscriptionHandlers<Resumable>,
        resumed: false,
      };
      active.add(sub);
      const after = (variables.after as string | null | undefined) ?? undefined;
      if (after === undefined) openFromHead(sub);
      else open(sub, (sub.cursor = after));
      return () => {
        active.delete(sub);
        sub.release?.();
        sub.release = undefined;
      };
    },
    onReconnect(listener) {
      reconnectListeners.add(listener);
      return () => void reconnectListeners.delete(listener);
    },
    status: () => status,
    onStatus(listener) {
      statusListeners.add(listener);
      return () => void statusListeners.delete(listener);
    },
    catchUp: () => catchUp,
    onCatchUp(listener) {
      catchUpListeners.add(listener);
      return () => void catchUpListeners.delete(listener);
    },
    renew() {
      if (status !== "live") return; // not connected: the next attempt reads the new token anyway
      renewing = true;
      client.terminate();
    },
    // Disposing while a connection attempt is refused rejects; nothing is left to clean up then.
    dispose: () => {
      clearTimeout(quiet);
      void Promise.resolve(client.dispose()).catch(() => {});
    },
  };
}

export const LiveContext = createContext<LiveConnection | null>(null);

const useLive = () => {
  const live = useContext(LiveContext);
  if (!live) throw new Error("LiveContext is not provided");
  return live;
};

/**
 * Subscribes while mounted, resuming after drops; the handlers may change between renders without
 * resubscribing. `onStale` runs when a drop could not be bridged by a replay: refetch then.
 * `pause`: not yet (a view that subscribes after the cursor its query's last page ended at, once it
 * has it).
 */
export function useLiveSubscription<D extends Resumable, V extends ResumeVariables>(
  document: TadaDocumentNode<D, V>,
  variables: NoInfer<V>,
  handlers: { onData: (data: NoInfer<D>) => void; onStale: () => void; onError?: (error: ApiError) => void },
  { pause = false }: { pause?: boolean } = {},
) {
  const live = useLive();
  const latest = useRef(handlers);
  latest.current = handlers;
  const key = JSON.stringify(variables);
  useEffect(() => {
    if (pause) return;
    return live.subscribe(document, variables, {
      onData: (d) => latest.current.onData(d),
      onStale: () => latest.current.onStale(),
      onError: (e) => latest.current.onError?.(e),
    });
  }, [live, document, key, pause]);
}

/** Runs `refetch` whenever the live connection comes back after a drop (views with no subscription). */
export function useReconnect(refetch: () => void) {
  const live = useLive();
  const latest = useRef(refetch);
  latest.current = refetch;
  useEffect(() => live.onReconnect(() => latest.current()), [live]);
}

export function useLiveStatus(): LiveStatus {
  const live = useLive();
  const [status, setStatus] = useState(live.status());
  useEffect(() => {
    setStatus(live.status());
    return live.onStatus(setStatus);
  }, [live]);
  return status;
}

/** What the latest return of the socket brought (null before any drop, and while dropped). */
export function useCatchUp(): CatchUp | null {
  const live = useLive();
  const [catchUp, setCatchUp] = useState(live.catchUp());
  useEffect(() => {
    setCatchUp(live.catchUp());
    return live.onCatchUp(setCatchUp);
  }, [live]);
  return catchUp;
}
