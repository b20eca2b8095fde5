// The application's vulnerabilities with the filters of GET /applications/{id}/vulnerabilities
// (severity, status), kept in the address (?severity=HIGH&status=OPEN) so a filtered view can be
// shared or reloaded, a page at a time. Each row's Details button opens its analysis and history.
import { Fragment } from "preact";
import { useLocation } from "preact-iso";
import { useState } from "preact/hooks";
import { fromCombinedError } from "../../api-error.ts";
import { Badge } from "../../components/badges.tsx";
import { ErrorNotice } from "../../components/error-notice.tsx";
import { Empty, Loading } from "../../components/states.tsx";
import { DataTable } from "../../components/data-table.tsx";
import { Time } from "../../components/time.tsx";
import { useApplicationVulnerabilities, type VulnerabilityFilter } from "./use-application.ts";
import { VulnerabilityDetails } from "./vulnerability-details.tsx";
import styles from "./vulnerabilities-section.module.css";

export const PAGE_SIZE = 20;
const SEVERITIES = ["CRITICAL", "HIGH", "MEDIUM", "LOW"] as const;
const STATUSES = ["OPEN", "IN_PROGRESS", "RESOLVED", "ACCEPTED"] as const;
const COLUMNS = ["Title", "Severity", "Status", "CVSS", "Weakness", "Tool", "Location", "Found", "Triage"];

const pick = <T extends string>(values: readonly T[], value: string | undefined): T | null =>
  values.includes(value as T) ? (value as T) : null;

export function VulnerabilitiesSection({ applicationId, refreshes }: { applicationId: string; refreshes: number }) {
  const { path, query, route } = useLocation();
  const filter: VulnerabilityFilter = {
    severity: pick(SEVERITIES, query.severity),
    status: pick(STATUSES, query.status),
  };
  // Cursors of the pages before the current one (the first page has none).
  const [cursors, setCursors] = useState<string[]>([]);
  // The rows whose details are open.
  const [opened, setOpened] = useState<ReadonlySet<string>>(new Set());
  const toggle = (id: string) =>
    setOpened((ids) => {
      const next = new Set(ids);
      if (!next.delete(id)) next.add(id);
      return next;
    });
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
        <FilterSelect
          name="severity"
          label="Severity"
          values={SEVERITIES}
          value={filter.severity}
          onChange={setFilter}
        />
        <FilterSelect name="status" label="Status" values={STATUSES} value={filter.status} onChange={setFilter} />
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
          <DataTable label="Vulnerabilities" caption="Vulnerabilities, newest first" columns={COLUMNS}>
            {connection.edges.map(({ node: v }) => (
              <Fragment key={v.id}>
                <tr>
                  <th scope="row">{v.title}</th>
                  <td>
                    <Badge kind="severity" value={v.severity} />
                  </td>
                  <td>
                    <Badge kind="status" value={v.status} />
                    {v.analysis && <div class={styles.state}>{v.analysis.state.toLowerCase().replace(/_/g, " ")}</div>}
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
                  <td>
                    <button
                      type="button"
                      class="secondary"
                      aria-expanded={opened.has(v.id)}
                      aria-controls={`details-${v.id}`}
                      aria-label={`Details of ${v.title}`}
                      onClick={() => toggle(v.id)}
                    >
                      Details
                    </button>
                  </td>
                </tr>
                {opened.has(v.id) && (
                  <tr id={`details-${v.id}`}>
                    <td colSpan={COLUMNS.length}>
                      <VulnerabilityDetails
                        applicationId={applicationId}
                        id={v.id}
                        title={v.title}
                        refreshes={refreshes}
                      />
                    </td>
                  </tr>
                )}
              </Fragment>
            ))}
          </DataTable>
          <nav aria-label="Vulnerability pages" class={styles.pager}>
            <button
              type="button"
              class="secondary"
              disabled={cursors.length === 0}
              onClick={() => setCursors((c) => c.slice(0, -1))}
            >
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

interface FilterSelectProps {
  name: "severity" | "status";
  label: string;
  values: readonly string[];
  value: string | null | undefined;
  onChange: (name: "severity" | "status", value: string) => void;
}

function FilterSelect({ name, label, values, value, onChange }: FilterSelectProps) {
  return (
    <div>
      <label for={`filter-${name}`}>{label}</label>
      <select id={`filter-${name}`} value={value ?? ""} onChange={(e) => onChange(name, e.currentTarget.value)}>
        <option value="">any</option>
        {values.map((v) => (
          <option key={v} value={v}>
            {v.toLowerCase().replace("_", " ")}
          </option>
        ))}
      </select>
    </div>
  );
}
