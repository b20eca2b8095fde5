import { useState } from "preact/hooks";
import { fromCombinedError } from "../../api-error.ts";
import { Badge } from "../../components/badges.tsx";
import { ErrorNotice } from "../../components/error-notice.tsx";
import { Empty, Loading } from "../../components/states.tsx";
import { DataTable } from "../../components/data-table.tsx";
import { Time } from "../../components/time.tsx";
import { isAhead, type ScanEvent } from "../../scan-events.ts";
import { useApplicationScans, type ApplicationScan } from "./use-application.ts";

const STEP = 20;
const COLUMNS = ["Type", "Status", "Tool", "Triggered by", "Started", "Completed", "Findings"];

type Row = ApplicationScan | (ScanEvent & Partial<Pick<ApplicationScan, "source" | "failure" | "createdAt">>);

/** The query's scans with the live events laid over them; scans only events know of come first (they are the newest). */
function withEvents(scans: readonly ApplicationScan[], events: ReadonlyMap<string, ScanEvent>): Row[] {
  const known = new Set(scans.map((s) => s.id));
  const unknown = [...events.values()].filter((e) => !known.has(e.id)).sort((a, b) => (a.id < b.id ? 1 : -1));
  return [
    ...unknown,
    ...scans.map((s) => {
      const event = events.get(s.id);
      return event && isAhead(s, event) ? { ...s, ...event } : s;
    }),
  ];
}

export function ScansSection({
  applicationId,
  events,
  refreshes,
}: {
  applicationId: string;
  events: ReadonlyMap<string, ScanEvent>;
  refreshes: number;
}) {
  const [first, setFirst] = useState(STEP);
  const result = useApplicationScans(applicationId, first, refreshes);
  if (result.error && !result.data) return <ErrorNotice error={fromCombinedError(result.error)} />;
  if (!result.data) return <Loading what="scans" />;
  const { scans } = result.data.application;
  const rows = withEvents(
    scans.edges.map((e) => e.node),
    events,
  );
  if (rows.length === 0) return <Empty>No scans yet: trigger one or upload a report.</Empty>;
  return (
    <>
      <DataTable label="Scans" caption="Scans, newest first" columns={COLUMNS}>
        {rows.map((scan) => (
          <tr key={scan.id} data-scan-id={scan.id}>
            <th scope="row">{scan.scanType.toLowerCase()}</th>
            <td>
              <Badge kind="status" value={scan.status} />
              {scan.failure && <div>{scan.failure.reason}</div>}
            </td>
            <td>
              {scan.source ? `${scan.source.tool}${scan.source.toolVersion ? ` ${scan.source.toolVersion}` : ""}` : "—"}
            </td>
            <td>{scan.triggeredBy ?? "—"}</td>
            <td>
              <Time value={scan.startedAt} />
            </td>
            <td>
              <Time value={scan.completedAt} />
            </td>
            <td>
              {scan.summary
                ? `${scan.summary.totalFindings}: ${scan.summary.critical} critical, ${scan.summary.high} high, ${scan.summary.medium} medium, ${scan.summary.low} low`
                : "—"}
            </td>
          </tr>
        ))}
      </DataTable>
      {result.error && <ErrorNotice error={fromCombinedError(result.error)} />}
      {scans.pageInfo.hasNextPage && (
        <button type="button" class="secondary" onClick={() => setFirst((n) => n + STEP)}>
          Show more scans
        </button>
      )}
    </>
  );
}
