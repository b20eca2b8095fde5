// An application's recent changes, from the audit trail (docs/spec/CONTRACT.md §17): its
// application.created and application.updated events. The log reads oldest first only, so the hook
// reads every page of the application's changes and keeps the latest; then it subscribes after the
// cursor the last page ended at, so a change committed meanwhile is neither missed nor shown twice.
import type { Client, CombinedError, OperationResult } from "@urql/core";
import { useClient } from "@urql/preact";
import { useEffect, useState } from "preact/hooks";
import { graphql, type ResultOf } from "../../graphql.ts";
import { useLiveSubscription } from "../../live.ts";

const ApplicationChanges = graphql(`
  query ApplicationChanges($id: ID!, $first: Int!, $after: String) {
    events(applicationId: $id, types: [APPLICATION_CREATED, APPLICATION_UPDATED], first: $first, after: $after) {
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          eventId
          eventType
          timestamp
          data
        }
      }
    }
  }
`);

const ApplicationChanged = graphql(`
  subscription ApplicationChanged($id: ID!, $after: String) {
    events(applicationId: $id, types: [APPLICATION_CREATED, APPLICATION_UPDATED], after: $after) {
      cursor
      eventId
      eventType
      timestamp
      data
    }
  }
`);

type ChangeEvent = Pick<ResultOf<typeof ApplicationChanged>["events"], "eventId" | "eventType" | "timestamp" | "data">;

export interface Change {
  eventId: string;
  timestamp: string;
  kind: "created" | "updated";
  /** Who made it (the token's subject); null when the event does not say. */
  actor: string | null;
  /** The fields an update changed (none for a creation). */
  changed: readonly string[];
  /** The owner after the change; undefined when the event does not carry it. */
  owner: string | null | undefined;
}

/** The changes shown. */
export const SHOWN = 20;
/** One more than shown: the oldest shown's predecessor says what an owner change changed from. */
const KEPT = SHOWN + 1;
/** As many as one request may ask for. */
const PAGE_SIZE = 500;

export type RecentChanges =
  | { state: "loading" }
  /** The token lacks the scope to read application.* events (applications:read). */
  | { state: "forbidden" }
  | { state: "failed"; error: CombinedError }
  /** Oldest first, up to KEPT; `total`: how many the audit trail holds, counted while reading. */
  | { state: "read"; changes: readonly Change[]; total: number };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null;

/** What the console shows of an event's data (the application as REST returns it, `actor`, `changed`). */
function toChange({ eventId, eventType, timestamp, data }: ChangeEvent): Change {
  const d = isRecord(data) ? data : {};
  const sub = isRecord(d.actor) ? d.actor.sub : undefined;
  const owner = d.owner;
  return {
    eventId,
    timestamp,
    kind: eventType === "application.created" ? "created" : "updated",
    actor: typeof sub === "string" ? sub : null,
    changed: Array.isArray(d.changed) ? d.changed.filter((f): f is string => typeof f === "string") : [],
    owner: typeof owner === "string" || owner === null ? owner : undefined,
  };
}

/** `known` with `added` after it, each event once, the latest KEPT. */
function appended(known: readonly Change[], added: readonly Change[]): { changes: Change[]; added: number } {
  const ids = new Set(known.map((c) => c.eventId));
  const fresh = added.filter((c) => !ids.has(c.eventId));
  return { changes: [...known, ...fresh].slice(-KEPT), added: fresh.length };
}

interface Read {
  result: RecentChanges;
  /** Where the read ended: the live changes come after it. */
  after?: string | null;
}

/** Every page of the application's changes, one after the other, until the last or a failure. */
async function readChanges(client: Client, id: string, isCancelled: () => boolean): Promise<Read | null> {
  let changes: Change[] = [];
  let total = 0;
  let after: string | null = null;
  for (;;) {
    const page: OperationResult<ResultOf<typeof ApplicationChanges>> = await client
      .query(ApplicationChanges, { id, first: PAGE_SIZE, after }, { requestPolicy: "network-only" })
      .toPromise();
    if (isCancelled()) return null;
    if (!page.data) {
      const forbidden = page.error?.graphQLErrors.some((e) => e.extensions?.code === "FORBIDDEN");
      return { result: forbidden ? { state: "forbidden" } : { state: "failed", error: page.error! } };
    }
    const { edges, pageInfo } = page.data.events;
    const read = appended(
      changes,
      edges.map((e) => toChange(e.node)),
    );
    changes = read.changes;
    total += read.added;
    if (!pageInfo.hasNextPage || pageInfo.endCursor === null) {
      return { result: { state: "read", changes, total }, after: pageInfo.endCursor };
    }
    after = pageInfo.endCursor;
  }
}

/** A read of one application's changes, and the live ones after it. */
interface Shown extends Read {
  id: string;
}

/**
 * The application's latest changes, read once, then live. `live` counts the changes that arrived
 * after the read (replayed ones after a drop included): the application's details changed with them.
 */
export function useRecentChanges(id: string): { changes: RecentChanges; live: number } {
  const client = useClient();
  const [shown, setShown] = useState<Shown | null>(null);
  const [reads, setReads] = useState(0);
  const [live, setLive] = useState(0);
  useEffect(() => {
    let cancelled = false;
    void readChanges(client, id, () => cancelled).then((read) => read && setShown({ id, ...read }));
    return () => void (cancelled = true);
  }, [client, id, reads]);
  // What was read of another application (the view was opened on another one) is not shown.
  const current = shown?.id === id ? shown : null;
  const changes: RecentChanges = current?.result ?? { state: "loading" };
  useLiveSubscription(
    ApplicationChanged,
    { id, after: current?.after ?? null },
    {
      onData: ({ events }) => {
        setShown((known) => {
          if (known?.id !== id || known.result.state !== "read") return known;
          const next = appended(known.result.changes, [toChange(events)]);
          return { ...known, result: { state: "read", changes: next.changes, total: known.result.total + next.added } };
        });
        setLive((n) => n + 1);
      },
      // A drop the replay could not bridge: read the changes again.
      onStale: () => setReads((n) => n + 1),
    },
    // Only once read, from where the read ended (its last page's end cursor).
    { pause: changes.state !== "read" },
  );
  return { changes, live };
}
