// Time to remediate by severity (median and 90th percentile, in days) as bars, and every figure
// of the period by severity in a table: resolved, median, p90, within SLA, breached now.
import { useMemo } from "preact/hooks";
import { DataTable } from "../../components/data-table.tsx";
import { days, SEVERITIES, share } from "./remediation-figures.ts";
import { RemediationChart, type ChartSeries } from "./remediation-chart.tsx";
import type { Metrics } from "./use-remediation.ts";
import styles from "./remediation-view.module.css";

export function TimeToRemediate({ metrics, scope }: { metrics: Metrics; scope: string }) {
  const series = useMemo<ChartSeries[]>(
    () => [
      {
        key: "median",
        label: "Median",
        color: "#1f4e8c",
        dash: [],
        values: SEVERITIES.map((s) => metrics.bySeverity[s.key].mttrDays.median),
      },
      {
        key: "p90",
        label: "90th percentile",
        color: "#a15c07",
        dash: [],
        values: SEVERITIES.map((s) => metrics.bySeverity[s.key].mttrDays.p90),
      },
    ],
    [metrics],
  );
  const categories = useMemo(() => SEVERITIES.map((s) => s.label), []);
  const description = `Days to remediate by severity, ${scope}`;
  return (
    <figure class={styles.figure} aria-labelledby="mttr-caption">
      <figcaption id="mttr-caption">{description}</figcaption>
      <ul class={styles.legend} aria-label="Legend of the time to remediate">
        {series.map((s) => (
          <li key={s.key}>
            <span class={`${styles.swatch} ${styles[s.key] ?? ""}`} aria-hidden="true" />
            {s.label}
          </li>
        ))}
      </ul>
      <div role="img" aria-label={`Chart: ${description}. Its numbers are in the table below it.`}>
        <RemediationChart categories={categories} series={series} />
      </div>
      <DataTable
        label="Remediation by severity"
        caption={`Remediation by severity, ${scope}`}
        columns={["Severity", "Resolved", "Median days", "90th percentile days", "Within SLA", "Breached now"]}
      >
        {SEVERITIES.map((s) => {
          const m = metrics.bySeverity[s.key];
          return (
            <tr key={s.key}>
              <th scope="row">{s.label}</th>
              <td>{m.resolved}</td>
              <td>{days(m.mttrDays.median)}</td>
              <td>{days(m.mttrDays.p90)}</td>
              <td>{share(m.withinSla)}</td>
              <td>{m.breached}</td>
            </tr>
          );
        })}
      </DataTable>
    </figure>
  );
}
