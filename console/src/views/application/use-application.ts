import { useQuery } from "@urql/preact";
import { useState } from "preact/hooks";
import { useCoalesced } from "../../coalesce.ts";
import { graphql, type ResultOf, type VariablesOf } from "../../graphql.ts";
import { useLiveSubscription } from "../../live.ts";
import { useRefreshed } from "../../refreshed.ts";
import { remember, ScanUpdated, type ScanEvent } from "../../scan-events.ts";

const ApplicationDetails = graphql(`
  query ApplicationDetails($id: ID!) {
    application(id: $id) {
      id
      name
      description
      owner
      criticality
      language
      repoUrl
      serviceUrl
      tags
      policyEvaluation {
        decision
        violations {
          policyId
          policyName
          action
          vulnerabilityIds
        }
      }
      vulnerabilityCounts {
        unresolvedBySeverity {
          critical
          high
          medium
          low
        }
        byStatus {
          open
          inProgress
          resolved
          accepted
        }
        breached
      }
    }
  }
`);

const ApplicationScans = graphql(`
  query ApplicationScans($id: ID!, $first: Int!) {
    application(id: $id) {
      id
      scans(first: $first) {
        totalCount
        pageInfo {
          hasNextPage
        }
        edges {
          node {
            id
            scanType
            status
            triggeredBy
            createdAt
            startedAt
            completedAt
            summary {
              totalFindings
              critical
              high
              medium
              low
            }
            source {
              kind
              tool
              toolVersion
            }
            failure {
              reason
            }
          }
        }
      }
    }
  }
`);

const ApplicationVulnerabilities = graphql(`
  query ApplicationVulnerabilities($id: ID!, $filter: ApplicationVulnerabilityFilter, $first: Int!, $after: String) {
    application(id: $id) {
      id
      vulnerabilities(filter: $filter, first: $first, after: $after) {
        totalCount
        pageInfo {
          hasNextPage
          endCursor
        }
        edges {
          node {
            id
            title
            severity
            status
            cwe
            cve
            aliases
            cvssScore
            tool
            location
            scanType
            createdAt
            analysis {
              state
              expiresAt
            }
            sla {
              state
              dueAt
            }
          }
        }
      }
    }
  }
`);

/** Another client's triage (a VEX document, a report's decision): only that something changed matters here. */
const VulnerabilityUpdated = graphql(`
  subscription VulnerabilityUpdated($applicationId: ID, $after: String) {
    vulnerabilityUpdated(applicationId: $applicationId, after: $after) {
      cursor
      id
    }
  }
`);

/** A remediation deadline crossed: that row's SLA state, and the counts, changed. */
const VulnerabilitySlaBreached = graphql(`
  subscription VulnerabilitySlaBreached($applicationId: ID, $after: String) {
    vulnerabilitySlaBreached(applicationId: $applicationId, after: $after) {
      cursor
      id
    }
  }
`);

export type ApplicationScan = ResultOf<typeof ApplicationScans>["application"]["scans"]["edges"][number]["node"];
export type VulnerabilityFilter = NonNullable<VariablesOf<typeof ApplicationVulnerabilities>["filter"]>;

/**
 * The application's live state: its scanUpdated events (replayed ones after a drop included), and a
 * count of refreshes the queries below follow (a scan finished, a vulnerability's status or
 * analysis changed, whoever changed it, or its remediation deadline passed: findings, counts, gate and history changed; or a drop could
 * not be bridged by a replay). `refresh` asks for one, after this page's own write (a VEX document
 * applied). A VEX of 10,000 statements is 10,000 events: refreshes are coalesced (one per 200 ms).
 */
export function useApplicationLive(applicationId: string) {
  const [events, setEvents] = useState<ReadonlyMap<string, ScanEvent>>(new Map());
  const [refreshes, setRefreshes] = useState(0);
  const refresh = useCoalesced(() => setRefreshes((n) => n + 1), 200);
  useLiveSubscription(
    ScanUpdated,
    { applicationId },
    {
      onData: ({ scanUpdated }) => {
        setEvents((known) => remember(known, scanUpdated));
        if (scanUpdated.status !== "QUEUED") refresh();
      },
      // A drop the replay could not bridge: what the queries showed may be out of date.
      onStale: () => setRefreshes((n) => n + 1),
    },
  );
  useLiveSubscription(
    VulnerabilityUpdated,
    { applicationId },
    { onData: refresh, onStale: () => setRefreshes((n) => n + 1) },
  );
  useLiveSubscription(
    VulnerabilitySlaBreached,
    { applicationId },
    { onData: refresh, onStale: () => setRefreshes((n) => n + 1) },
  );
  return { events, refreshes, refresh };
}

export function useApplicationDetails(id: string, refreshes: number) {
  const [result, refetch] = useQuery({ query: ApplicationDetails, variables: { id } });
  return useRefreshed(result, refetch, refreshes);
}

export function useApplicationScans(id: string, first: number, refreshes: number) {
  const [result, refetch] = useQuery({ query: ApplicationScans, variables: { id, first } });
  return useRefreshed(result, refetch, refreshes);
}

export function useApplicationVulnerabilities(
  id: string,
  filter: VulnerabilityFilter,
  first: number,
  after: string | null,
  refreshes: number,
) {
  const [result, refetch] = useQuery({ query: ApplicationVulnerabilities, variables: { id, filter, first, after } });
  return useRefreshed(result, refetch, refreshes);
}
