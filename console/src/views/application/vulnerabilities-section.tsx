// The application's vulnerabilities with the filters of GET /applications/{id}/vulnerabilities
// (severity, status, SLA), kept in the address (?severity=HIGH&status=OPEN&sla=BREACHED) so a
// filtered view can be shared or reloaded, a page at a time. Each row shows where it stands against
// its remediation deadline; its Details button opens its analysis and history, its Triage button
// the form that decides it.
import { Fragment } from "preact";
import { useLocation } from "preact-iso";
import { useRef, useState } from "preact/hooks";
import { fromCombinedError } from "../../api-error.ts";
import { Badge } from "../../components/badges.tsx";
import { ErrorNotice } from "../../components/error-notice.tsx";
import { Empty, Loading } from "../../components/states.tsx";
import { DataTable } from "../../components/data-table.tsx";
import { Time } from "../../components/time.tsx";
import { TriageForm } from "./triage-form.tsx";
import { useApplicationVulnerabilities, type VulnerabilityFilter } from "./use-application.ts";
import { VulnerabilityDetails } from "./vulnerability-details.tsx";
import styles from "./vulnerabilities-section.module.css";

export const PAGE_SIZE = 20;
const SEVERITIES = ["CRITICAL", "HIGH", "MEDIUM", "LOW"] as const;
const STATUSES = ["OPEN", "IN_PROGRESS", "RESOLVED", "ACCEPTED"] as const;
const SLA_STATES = ["ON_TRACK", "DUE_SOON", "BREACHED"] as const;
const COLUMNS = ["Title", "Severity", "Status", "Due", "CVSS", "Weakness", "Tool", "Location", "Found", "Triage"];
type FilterName = "severity" | "status" | "sla";

const pick = <T extends string>(values: readonly T[], value: string | undefined): T | null =>
  values.includes(value as T) ? (value as T) : null;

interface VulnerabilitiesSectionProps {
  applicationId: string;
  refreshes: number;
  /** After a triage sent from a row. */
  onTriaged: () => void;
}

export function VulnerabilitiesSection({ applicationId, refreshes, onTriaged }: VulnerabilitiesSectionProps) {
  const { path, query, route } = useLocation();
  const filter: VulnerabilityFilter = {
    severity: pick(SEVERITIES, query.severity),
    status: pick(STATUSES, query.status),
    sla: pick(SLA_STATES, query.sla),
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
  // The row whose triage form is open (one at a time), and the buttons that open them, to return
  // the focus to when a form closes.
  const [triaging, setTriaging] = useState<string | null>(null);
  const triageButtons = useRef(new Map<string, HTMLButtonElement>());
  const closeTriage = () => {
    if (triaging) triageButtons.current.get(triaging)?.focus();
    setTriaging(null);
  };
  const after = cursors.at(-1) ?? null;
  const result = useApplicationVulnerabilities(applicationId, filter, PAGE_SIZE, after, refreshes);

  const setFilter = (name: FilterName, value: string) => {
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
        <FilterSelect name="sla" label="SLA" values={SLA_STATES} value={filter.sla} onChange={setFilter} />
      </form>
      {result.error && <ErrorNotice error={fromCombinedError(result.error)} />}
      {!connection ? (
        !result.error && <Loading what="vulnerabilities" />
      ) : connection.totalCount === 0 ? (
        <Empty>
          No vulnerabilities{filter.severity || filter.status || filter.sla ? " match these filters" : " found yet"}.
        </Empty>
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
                    {v.analysis?.expiresAt && (
                      <div class={styles.state}>
                        until <Time value={v.analysis.expiresAt} />
                      </div>
                    )}
                  </td>
                  <td>
                    <Badge kind="sla" value={v.sla.state} />
                    {v.sla.dueAt && (
                      <div class={styles.state}>
                        <Time value={v.sla.dueAt} />
                      </div>
                    )}
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
                  <td class={styles.actions}>
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
                    <button
                      type="button"
                      class="secondary"
                      ref={(b) => {
                        if (b) triageButtons.current.set(v.id, b);
                        else triageButtons.current.delete(v.id);
                      }}
                      aria-expanded={triaging === v.id}
                      aria-controls={`triage-row-${v.id}`}
                      aria-label={`Triage ${v.title}`}
                      onClick={() => (triaging === v.id ? closeTriage() : setTriaging(v.id))}
                    >
                      Triage
                    </button>
                  </td>
                </tr>
                {triaging === v.id && (
                  <tr id={`triage-row-${v.id}`}>
                    <td colSpan={COLUMNS.length}>
                      <TriageForm
                        applicationId={applicationId}
                        vulnerability={v}
                        onApplied={onTriaged}
                        onClose={closeTriage}
                      />
                    </td>
                  </tr>
                )}
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
  name: FilterName;
  label: string;
  values: readonly string[];
  value: string | null | undefined;
  onChange: (name: FilterName, value: string) => void;
}

function FilterSelect({ name, label, values, value, onChange }: FilterSelectProps) {
  return (
    <div>
      <label for={`filter-${name}`}>{label}</label>
      <select id={`filter-${name}`} value={value ?? ""} onChange={(e) => onChange(name, e.currentTarget.value)}>
        <option value="">any</option>
        {values.map((v) => (
          <option key={v} value={v}>
            {v.toLowerCase().replace(/_/g, " ")}
          </option>
        ))}
      </select>
    </div>
  );
}
