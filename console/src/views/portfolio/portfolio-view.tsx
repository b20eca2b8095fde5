import { useLocation } from "preact-iso";
import { useState } from "preact/hooks";
import { fromCombinedError } from "../../api-error.ts";
import { Badge, SeverityCounts } from "../../components/badges.tsx";
import { ErrorNotice } from "../../components/error-notice.tsx";
import { Empty, Loading } from "../../components/states.tsx";
import { DataTable } from "../../components/data-table.tsx";
import { providerSettings } from "../../oidc/provider.ts";
import { latestOf, type ScanEvent } from "../../scan-events.ts";
import { providerSession } from "../../session.ts";
import { seesSeveralTeams, useViewer, type Viewer } from "../../viewer.ts";
import { OwnerFilter } from "./owner-filter.tsx";
import styles from "./portfolio-view.module.css";
import { usePortfolioLive, usePortfolioPage, type PortfolioApplication } from "./use-portfolio.ts";

const SCAN_TYPES = ["SAST", "DAST", "SCA", "CONTAINER"] as const;
const COLUMNS = ["Application", "Owner", "Criticality", "Gate", "Open vulnerabilities", "Breached", "Latest scans"];

export function PortfolioView() {
  const { events, refreshes } = usePortfolioLive();
  const viewer = useViewer().data?.me;
  // The owner chosen, kept in the address (?owner=team-a) so a filtered view can be shared or reloaded.
  const { path, query, route } = useLocation();
  const owner = query.owner || null;
  const chooseOwner = (next: string | null) => {
    const params = new URLSearchParams(query);
    if (next) params.set("owner", next);
    else params.delete("owner");
    const search = params.toString();
    route(search ? `${path}?${search}` : path, true);
  };
  // Latest event per application and scan type.
  const latest = new Map<string, ScanEvent>();
  for (const e of events.values()) {
    const key = `${e.applicationId}:${e.scanType}`;
    const known = latest.get(key);
    if (!known || latestOf(known, e) !== known) latest.set(key, e);
  }
  // Offered when there is a choice, and whenever one is made, so it can be undone.
  const filterable = owner !== null || (viewer !== undefined && seesSeveralTeams(viewer));
  return (
    <>
      <h1 tabIndex={-1}>Portfolio</h1>
      {filterable && <OwnerFilter selected={owner} onChange={chooseOwner} />}
      <PortfolioPages key={owner ?? ""} owner={owner} viewer={viewer} refreshes={refreshes} latest={latest} />
    </>
  );
}

interface PagesProps {
  owner: string | null;
  viewer: Viewer | undefined;
  refreshes: number;
  latest: ReadonlyMap<string, ScanEvent>;
}

/** The pages shown so far: the first, and one more each time the last one's "Show more" is pressed. */
function PortfolioPages({ owner, viewer, refreshes, latest }: PagesProps) {
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  return (
    <>
      {cursors.map((after, i) => (
        <PortfolioPage
          key={after ?? "first"}
          after={after}
          owner={owner}
          viewer={viewer}
          first={i === 0}
          last={i === cursors.length - 1}
          refreshes={refreshes}
          latest={latest}
          onMore={(cursor) => setCursors((c) => [...c, cursor])}
        />
      ))}
    </>
  );
}

interface PageProps {
  after: string | null;
  owner: string | null;
  viewer: Viewer | undefined;
  first: boolean;
  last: boolean;
  refreshes: number;
  latest: ReadonlyMap<string, ScanEvent>;
  onMore: (cursor: string) => void;
}

function PortfolioPage({ after, owner, viewer, first, last, refreshes, latest, onMore }: PageProps) {
  const result = usePortfolioPage(after, owner, refreshes);
  if (result.error && !result.data) return <ErrorNotice error={fromCombinedError(result.error)} />;
  if (!result.data) return <Loading what="applications" />;
  const { applications } = result.data;
  if (first && applications.totalCount === 0) return <EmptyPortfolio owner={owner} viewer={viewer} />;
  return (
    <>
      {result.error && <ErrorNotice error={fromCombinedError(result.error)} />}
      {first && (
        <p>
          {applications.totalCount} application{applications.totalCount === 1 ? "" : "s"}
          {owner !== null && ` owned by ${owner}`}, newest first.
        </p>
      )}
      <DataTable
        label={first ? "Applications" : "More applications"}
        caption={first ? "Applications" : undefined}
        columns={COLUMNS}
      >
        {applications.edges.map(({ node }) => (
          <ApplicationRow key={node.id} app={node} latest={latest} />
        ))}
      </DataTable>
      {last && applications.pageInfo.hasNextPage && applications.pageInfo.endCursor && (
        <button type="button" class="secondary" onClick={() => onMore(applications.pageInfo.endCursor!)}>
          Show more applications
        </button>
      )}
    </>
  );
}

function EmptyPortfolio({ owner, viewer }: { owner: string | null; viewer: Viewer | undefined }) {
  if (owner !== null) return <Empty>No applications owned by {owner}.</Empty>;
  if (viewer && !viewer.orgWide && viewer.teams?.length === 0) {
    const provider = providerSettings();
    if (provider && providerSession())
      return (
        <Empty>
          You are in no team at {provider.providerName} (its groups are the teams), so you see no application. Ask its
          administrators to add you to your team's group.
        </Empty>
      );
    return <Empty>This token belongs to no team, so it sees no application.</Empty>;
  }
  return <Empty>No applications yet. Create one with POST /applications or the createApplication mutation.</Empty>;
}

function ApplicationRow({ app, latest }: { app: PortfolioApplication; latest: ReadonlyMap<string, ScanEvent> }) {
  const scans = SCAN_TYPES.flatMap((type) => {
    const scan = latestOf(
      app.latestScans.find((s) => s.scanType === type),
      latest.get(`${app.id}:${type}`),
    );
    return scan ? [scan] : [];
  });
  return (
    <tr>
      <th scope="row">
        <a href={`/console/applications/${app.id}`}>{app.name}</a>
      </th>
      <td>{app.owner ?? "—"}</td>
      <td>
        <Badge kind="criticality" value={app.criticality} />
      </td>
      <td>
        <Badge kind="decision" value={app.policyEvaluation.decision} />
      </td>
      <td>
        <SeverityCounts counts={app.vulnerabilityCounts.unresolvedBySeverity} />
      </td>
      <td>
        <span class={app.vulnerabilityCounts.breached > 0 ? styles.breached : styles.none}>
          {app.vulnerabilityCounts.breached}
        </span>
      </td>
      <td>
        {scans.length === 0 ? (
          <span class={styles.none}>never scanned</span>
        ) : (
          <ul class={styles.scans}>
            {scans.map((s) => (
              <li key={s.scanType}>
                {s.scanType.toLowerCase()} <Badge kind="status" value={s.status} />
              </li>
            ))}
          </ul>
        )}
      </td>
    </tr>
  );
}
