// The remediation view's data: GraphQL remediationMetrics (docs/spec/CONTRACT.md §19) for the
// portfolio, a team or an application, refetched when a vulnerability's status changes or a
// deadline passes; and the applications to choose among (every page of them, as the API lists
// no owners).
import type { Client, CombinedError, OperationResult } from "@urql/core";
import { useClient, useQuery } from "@urql/preact";
import { useEffect, useState } from "preact/hooks";
import { useCoalesced } from "../../coalesce.ts";
import { graphql, type ResultOf } from "../../graphql.ts";
import { useLiveSubscription } from "../../live.ts";
import { useRefreshed } from "../../refreshed.ts";

const SeverityFigures = graphql(`
  fragment SeverityFigures on SeverityRemediationMetrics @_unmask {
    resolved
    mttrDays {
      median
      p90
    }
    withinSla
    breached
    openByAge {
      fromDays
      toDays
      count
    }
  }
`);

const RemediationMetrics = graphql(
  `
    query RemediationMetrics($applicationId: ID, $owner: String) {
      remediationMetrics(applicationId: $applicationId, owner: $owner) {
        applicationId
        owner
        from
        to
        bySeverity {
          critical {
            ...SeverityFigures
          }
          high {
            ...SeverityFigures
          }
          medium {
            ...SeverityFigures
          }
          low {
            ...SeverityFigures
          }
        }
      }
    }
  `,
  [SeverityFigures],
);

const RemediationVulnerabilityUpdated = graphql(`
  subscription RemediationVulnerabilityUpdated($after: String) {
    vulnerabilityUpdated(after: $after) {
      cursor
      id
    }
  }
`);

const RemediationSlaBreached = graphql(`
  subscription RemediationSlaBreached($after: String) {
    vulnerabilitySlaBreached(after: $after) {
      cursor
      id
    }
  }
`);

export type Metrics = ResultOf<typeof RemediationMetrics>["remediationMetrics"];
export type SeverityMetrics = Metrics["bySeverity"]["critical"];

export function useRemediationMetrics(applicationId: string | null, owner: string | null) {
  const [refreshes, setRefreshes] = useState(0);
  const refresh = useCoalesced(() => setRefreshes((n) => n + 1), 1000);
  const stale = () => setRefreshes((n) => n + 1);
  useLiveSubscription(RemediationVulnerabilityUpdated, {}, { onData: refresh, onStale: stale });
  useLiveSubscription(RemediationSlaBreached, {}, { onData: refresh, onStale: stale });
  const [result, refetch] = useQuery({ query: RemediationMetrics, variables: { applicationId, owner } });
  return useRefreshed(result, refetch, refreshes);
}

const RemediationApplications = graphql(`
  query RemediationApplications($first: Int!, $after: String) {
    applications(first: $first, after: $after) {
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          id
          name
          owner
        }
      }
    }
  }
`);

export type ApplicationChoice = ResultOf<typeof RemediationApplications>["applications"]["edges"][number]["node"];

export interface ApplicationChoices {
  /** Every application the token sees, by name; null until every page was read. */
  applications: readonly ApplicationChoice[] | null;
  error?: CombinedError;
}

const PAGE_SIZE = 500;

async function readApplications(client: Client, isCancelled: () => boolean): Promise<ApplicationChoices | null> {
  const applications: ApplicationChoice[] = [];
  let after: string | null = null;
  for (;;) {
    const page: OperationResult<ResultOf<typeof RemediationApplications>> = await client
      .query(RemediationApplications, { first: PAGE_SIZE, after })
      .toPromise();
    if (isCancelled()) return null;
    if (!page.data) return { applications: null, error: page.error };
    applications.push(...page.data.applications.edges.map((e) => e.node));
    const { hasNextPage, endCursor } = page.data.applications.pageInfo;
    if (!hasNextPage || endCursor === null)
      return { applications: applications.sort((a, b) => a.name.localeCompare(b.name)) };
    after = endCursor;
  }
}

export function useApplicationChoices(): ApplicationChoices {
  const client = useClient();
  const [state, setState] = useState<ApplicationChoices>({ applications: null });
  useEffect(() => {
    let cancelled = false;
    void readApplications(client, () => cancelled).then((read) => read && setState(read));
    return () => void (cancelled = true);
  }, [client]);
  return state;
}
