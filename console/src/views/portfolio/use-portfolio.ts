import type { Client, CombinedError, OperationResult } from "@urql/core";
import { useClient, useQuery } from "@urql/preact";
import { useEffect, useState } from "preact/hooks";
import { useCoalesced } from "../../coalesce.ts";
import { graphql, type ResultOf } from "../../graphql.ts";
import { useLiveSubscription } from "../../live.ts";
import { useRefreshed } from "../../refreshed.ts";
import { remember, ScanUpdated, type ScanEvent } from "../../scan-events.ts";

const Portfolio = graphql(`
  query Portfolio($first: Int!, $after: String, $filter: ApplicationFilter) {
    applications(first: $first, after: $after, filter: $filter) {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          id
          name
          owner
          criticality
          policyEvaluation {
            decision
          }
          vulnerabilityCounts {
            unresolvedBySeverity {
              critical
              high
              medium
              low
            }
            breached
          }
          latestScans {
            id
            scanType
            status
          }
        }
      }
    }
  }
`);

/** A remediation deadline crossed somewhere: that application's breached count grew. */
const SlaBreached = graphql(`
  subscription PortfolioSlaBreached($after: String) {
    vulnerabilitySlaBreached(after: $after) {
      cursor
      id
    }
  }
`);

export type PortfolioApplication = ResultOf<typeof Portfolio>["applications"]["edges"][number]["node"];

/** As many as one request may ask for; more are fetched a page at a time on demand. */
const PAGE_SIZE = 500;

/**
 * The live part of the portfolio: every scanUpdated event (laid over the latest scans as they
 * arrive, replayed ones after a drop included), and a signal to refetch the pages when a scan
 * finishes (counts and the gate change with it), a remediation deadline is crossed (the breached
 * counts) or a drop could not be bridged by a replay.
 */
export function usePortfolioLive() {
  const [events, setEvents] = useState<ReadonlyMap<string, ScanEvent>>(new Map());
  const [refreshes, setRefreshes] = useState(0);
  const refresh = useCoalesced(() => setRefreshes((n) => n + 1), 500);
  useLiveSubscription(
    ScanUpdated,
    { applicationId: null },
    {
      onData: ({ scanUpdated }) => {
        setEvents((known) => remember(known, scanUpdated));
        if (scanUpdated.status === "COMPLETED" || scanUpdated.status === "FAILED") refresh();
      },
      // A drop the replay could not bridge: what the queries showed may be out of date.
      onStale: () => setRefreshes((n) => n + 1),
    },
  );
  useLiveSubscription(SlaBreached, {}, { onData: refresh, onStale: () => setRefreshes((n) => n + 1) });
  return { events, refreshes };
}

/**
 * One page of applications (the first when `after` is null), only `owner`'s when given,
 * refetched on each refresh.
 */
export function usePortfolioPage(after: string | null, owner: string | null, refreshes: number) {
  const [result, refetch] = useQuery({
    query: Portfolio,
    variables: { first: PAGE_SIZE, after, filter: owner === null ? null : { owner } },
  });
  return useRefreshed(result, refetch, refreshes);
}

const PortfolioOwners = graphql(`
  query PortfolioOwners($first: Int!, $after: String) {
    applications(first: $first, after: $after) {
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          owner
        }
      }
    }
  }
`);

export interface Owners {
  /** The distinct owners, sorted; null until every page was read. */
  owners: readonly string[] | null;
  error?: CombinedError;
}

/** Every page of PortfolioOwners, one after the other, until the last or a failure. */
async function readOwners(client: Client, isCancelled: () => boolean): Promise<Owners | null> {
  const owners = new Set<string>();
  let after: string | null = null;
  for (;;) {
    const page: OperationResult<ResultOf<typeof PortfolioOwners>> = await client
      .query(PortfolioOwners, { first: PAGE_SIZE, after })
      .toPromise();
    if (isCancelled()) return null;
    if (!page.data) return { owners: null, error: page.error };
    for (const { node } of page.data.applications.edges) if (node.owner !== null) owners.add(node.owner);
    const { hasNextPage, endCursor } = page.data.applications.pageInfo;
    if (!hasNextPage || endCursor === null) return { owners: [...owners].sort() };
    after = endCursor;
  }
}

/** The owners of the applications the token sees, read from every page of them (the API lists no owners). */
export function useApplicationOwners(): Owners {
  const client = useClient();
  const [state, setState] = useState<Owners>({ owners: null });
  useEffect(() => {
    let cancelled = false;
    void readOwners(client, () => cancelled).then((read) => read && setState(read));
    return () => void (cancelled = true);
  }, [client]);
  return state;
}
