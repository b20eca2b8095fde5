import { useQuery } from "@urql/preact";
import { useState } from "preact/hooks";
import { useCoalesced } from "../../coalesce.ts";
import { graphql, type ResultOf } from "../../graphql.ts";
import { useLiveSubscription } from "../../live.ts";
import { useRefreshed } from "../../refreshed.ts";
import { remember, ScanUpdated, type ScanEvent } from "../../scan-events.ts";

const Portfolio = graphql(`
  query Portfolio($first: Int!, $after: String) {
    applications(first: $first, after: $after) {
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

export type PortfolioApplication = ResultOf<typeof Portfolio>["applications"]["edges"][number]["node"];

/** As many as one request may ask for; more are fetched a page at a time on demand. */
const PAGE_SIZE = 500;

/**
 * The live part of the portfolio: every scanUpdated event (laid over the latest scans as they
 * arrive, replayed ones after a drop included), and a signal to refetch the pages when a scan
 * finishes (counts and the gate change with it) or a drop could not be bridged by a replay.
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
  return { events, refreshes };
}

/** One page of applications (the first when `after` is null), refetched on each refresh. */
export function usePortfolioPage(after: string | null, refreshes: number) {
  const [result, refetch] = useQuery({ query: Portfolio, variables: { first: PAGE_SIZE, after } });
  return useRefreshed(result, refetch, refreshes);
}
