// The live-data layer: the one graphql-ws connection of a session, and every subscription the
// views open on it. Views never talk to the socket themselves, so how a subscription resumes is
// decided here alone.
//
// Today, after the socket drops and comes back, graphql-ws re-sends each active subscription and
// the views refetch what they show (useReconnect), so nothing that happened meanwhile is missed.
// Resuming from the last event seen (CONTRACT §14, each payload's `cursor`, each subscription's
// `after`) is the change to make in `subscribe` below: remember the cursor of each payload and
// subscribe again with `after` instead of relying on the refetch.
import { stringifyDocument } from "@urql/core";
import type { TadaDocumentNode } from "gql.tada";
import { createClient, type Client } from "graphql-ws";
import { createContext } from "preact";
import { useContext, useEffect, useRef, useState } from "preact/hooks";
import type { ApiError } from "./api-error.ts";

export type LiveStatus = "connecting" | "live" | "reconnecting";

/** graphql-ws's Forbidden: the token was refused or expired while the socket was open. */
const FORBIDDEN = 4403;

export interface LiveConnection {
  subscribe<D, V>(document: TadaDocumentNode<D, V>, variables: V, onData: (data: D) => void, onError: (error: ApiError) => void): () => void;
  /** Called after the socket came back from a drop (not on the first connection). */
  onReconnect(listener: () => void): () => void;
  status(): LiveStatus;
  onStatus(listener: (status: LiveStatus) => void): () => void;
  dispose(): void;
}

export function createLiveConnection(token: string, onRefused: (reason: string) => void): LiveConnection {
  let status: LiveStatus = "connecting";
  const statusListeners = new Set<(status: LiveStatus) => void>();
  const reconnectListeners = new Set<() => void>();
  const setStatus = (next: LiveStatus) => {
    if (next === status) return;
    status = next;
    statusListeners.forEach((l) => l(next));
  };
  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/graphql`;
  const client: Client = createClient({
    url,
    connectionParams: { authorization: `Bearer ${token}` },
    lazy: false,
    keepAlive: 10_000,
    retryAttempts: Number.MAX_SAFE_INTEGER,
    // Quick at first (a restarted service is back in a second), then backing off to 10 s.
    retryWait: (retries) => new Promise((resolve) => setTimeout(resolve, Math.min(10_000, 250 * 2 ** retries) * (0.75 + Math.random() / 2))),
    shouldRetry: (event) => (event as CloseEvent | undefined)?.code !== FORBIDDEN,
    onNonLazyError: () => {},
    on: {
      connected: (_socket, _payload, wasRetry) => {
        setStatus("live");
        if (wasRetry) reconnectListeners.forEach((l) => l());
      },
      closed: (event) => {
        if ((event as CloseEvent).code === FORBIDDEN) onRefused("The service closed the live connection: the token was refused or has expired.");
        else setStatus("reconnecting");
      },
    },
  });

  return {
    subscribe(document, variables, onData, onError) {
      return client.subscribe<never>(
        { query: stringifyDocument(document), variables: variables as Record<string, unknown> },
        {
          next: (result) => {
            if (result.errors?.length) {
              const first = result.errors[0]!;
              onError({ title: "The subscription was refused", detail: result.errors.map((e) => e.message).join("; "), status: first.extensions?.code === "FORBIDDEN" ? 403 : undefined });
            } else if (result.data) onData(result.data);
          },
          error: () => {},
          complete: () => {},
        },
      );
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
    // Disposing while a connection attempt is refused rejects; nothing is left to clean up then.
    dispose: () => void Promise.resolve(client.dispose()).catch(() => {}),
  };
}

export const LiveContext = createContext<LiveConnection | null>(null);

const useLive = () => {
  const live = useContext(LiveContext);
  if (!live) throw new Error("LiveContext is not provided");
  return live;
};

/** Subscribes while mounted; `onData` may change between renders without resubscribing. */
export function useLiveSubscription<D, V>(document: TadaDocumentNode<D, V>, variables: V, onData: (data: D) => void, onError?: (error: ApiError) => void) {
  const live = useLive();
  const handlers = useRef({ onData, onError });
  handlers.current = { onData, onError };
  const key = JSON.stringify(variables);
  useEffect(
    () => live.subscribe(document, variables, (d) => handlers.current.onData(d), (e) => handlers.current.onError?.(e)),
    [live, document, key],
  );
}

/** Runs `refetch` whenever the live connection comes back after a drop. */
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
