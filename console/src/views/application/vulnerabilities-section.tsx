// The application's vulnerabilities with the filters of GET /applications/{id}/vulnerabilities
// (severity, status), kept in the address (?severity=HIGH&status=OPEN) so a filtered view can be
// shared or reloaded, a page at a time.
import { useLocation } from "preact-iso";
import { useState } from "preact/hooks";
import { fromCombinedError } from "../../api-error.ts";
import { Badge } from "../../components/badges.tsx";
import { ErrorNotice } from "../../components/error-notice.tsx";
import { Empty, Loading } from "../../components/states.tsx";
import { TableRegion } from "../../components/table-region.tsx";
import { Time } from "../../components/time.tsx";
import { useApplicationVulnerabilities, type VulnerabilityFilter } from "./use-application.ts";
import styles from "./vulnerabilities-section.module.css";

export const PAGE_SIZE = 20;
const SEVERITIES = ["CRITICAL", "HIGH", "MEDIUM", "LOW"] as const;
const STATUSES = ["OPEN", "IN_PROGRESS", "RESOLVED", "ACCEPTED"] as const;

const pick = <T extends string>(values: readonly T[], value: string | undefined): T | null =>
  values.includes(value as T) ? (value as T) : null;

export function VulnerabilitiesSection({ applicationId, refreshes }: { applicationId: string; refreshes: number }) {
  const { path, query, route } = useLocation();
  const filter: VulnerabilityFilter = { severity: pick(SEVERITIES, query.severity), status: pick(STATUSES, query.status) };
  // Cursors of the pages before the current one (the first page has none).
  const [cursors, setCursors] = useState<string[]>([]);
  const after = cursors.at(-1) ?? null;
  const result = useApplicationVulnerabilities(applicationId, filter, PAGE_SIZE, after, refreshes);

  const setFilter = (name: "severity" | "status", value: string) => {
    const params = new URLSearchParams(query);
    if (value) params.set(name, value);
    else params.delete(name);
    setCursors([]);
    const search = params.toString();
    route(search ? `${path}?${search}` : path, true);
  };

  const connection = result.data?.application.vulnerabilities;
  const start = cursors.length * PAGE_SIZE;
  return (
    <>
      <form class={styles.filters} onSubmit={(e) => e.preventDefault()} aria-label="Filter vulnerabilities">
        <div>
          <label for="filter-severity">Severity</label>
          <select id="filter-severity" value={filter.severity ?? ""} onChange={(e) => setFilter("severity", e.currentTarget.value)}>
            <option value="">any</option>
            {SEVERITIES.map((s) => (
              <option key={s} value={s}>
                {s.toLowerCase()}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="filter-status">Status</label>
          <select id="filter-status" value={filter.status ?? ""} onChange={(e) => setFilter("status", e.currentTarget.value)}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s.toLowerCase().replace("_", " ")}
              </option>
            ))}
          </select>
        </div>
      </form>
      {result.error && <ErrorNotice error={fromCombinedError(result.error)} />}
      {!connection ? (
        !result.error && <Loading what="vulnerabilities" />
      ) : connection.totalCount === 0 ? (
        <Empty>No vulnerabilities{filter.severity || filter.status ? " match these filters" : " found yet"}.</Empty>
      ) : (
        <>
          <p role="status">
            Showing {start + 1}–{start + connection.edges.length} of {connection.totalCount}
          </p>
          <TableRegion label="Vulnerabilities">
            <table>
              <caption>Vulnerabilities, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Title</th>
                  <th scope="col">Severity</th>
                  <th scope="col">Status</th>
                  <th scope="col">CVSS</th>
                  <th scope="col">Weakness</th>
                  <th scope="col">Tool</th>
                  <th scope="col">Location</th>
                  <th scope="col">Found</th>
                </tr>
              </thead>
              <tbody>
                {connection.edges.map(({ node: v }) => (
                  <tr key={v.id}>
                    <th scope="row">{v.title}</th>
                    <td>
                      <Badge kind="severity" value={v.severity} />
                    </td>
                    <td>
                      <Badge kind="status" value={v.status} />
                    </td>
                    <td>{v.cvssScore.toFixed(1)}</td>
                    <td>
                      {v.cwe}
                      {v.cve && <div>{v.cve}</div>}
                    </td>
                    <td>{v.tool}</td>
                    <td>
                      <code>{v.location ?? "—"}</code>
                    </td>
                    <td>
                      <Time value={v.createdAt} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableRegion>
          <nav aria-label="Vulnerability pages" class={styles.pager}>
            <button type="button" class="secondary" disabled={cursors.length === 0} onClick={() => setCursors((c) => c.slice(0, -1))}>
              Previous page
            </button>
            <button
              type="button"
              class="secondary"
              disabled={!connection.pageInfo.hasNextPage}
              onClick={() => setCursors((c) => [...c, connection.pageInfo.endCursor!])}
            >
              Next page
            </button>
          </nav>
        </>
      )}
    </>
  );
}
