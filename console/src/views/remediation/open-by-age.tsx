// Open and in-progress vulnerabilities now, by age on their remediation clock and severity: bars
// per age bin, and the same counts in a table.
import { useMemo } from "preact/hooks";
import { DataTable } from "../../components/data-table.tsx";
import { ageBin, SEVERITIES } from "./remediation-figures.ts";
import { RemediationChart, type ChartSeries } from "./remediation-chart.tsx";
import type { Metrics } from "./use-remediation.ts";
import styles from "./remediation-view.module.css";

export function OpenByAge({ metrics, scope }: { metrics: Metrics; scope: string }) {
  // Every severity has the same bins, in the same order.
  const bins = metrics.bySeverity.critical.openByAge;
  const categories = useMemo(
    () => bins.map((b) => (b.toDays === null ? `${b.fromDays}+` : `${b.fromDays}–${b.toDays}`)),
    [bins],
  );
  const series = useMemo<ChartSeries[]>(
    () =>
      SEVERITIES.map((s) => ({
        key: s.key,
        label: s.label,
        color: s.color,
        dash: s.dash,
        values: metrics.bySeverity[s.key].openByAge.map((b) => b.count),
      })),
    [metrics],
  );
  const description = `Open vulnerabilities by age and severity, ${scope}`;
  return (
    <figure class={styles.figure} aria-labelledby="age-caption">
      <figcaption id="age-caption">{description}</figcaption>
      <ul class={styles.legend} aria-label="Legend of the open vulnerabilities by age">
        {series.map((s) => (
          <li key={s.key}>
            <span class={`${styles.swatch} ${styles[s.key] ?? ""}`} aria-hidden="true" />
            {s.label}
          </li>
        ))}
      </ul>
      <div role="img" aria-label={`Chart: ${description}. Its numbers are in the table below it.`}>
        <RemediationChart categories={categories} series={series} xLabel="Age in days" />
      </div>
      <DataTable
        label="Open vulnerabilities by age"
        caption={`Open vulnerabilities by age and severity, ${scope}`}
        columns={["Age", ...SEVERITIES.map((s) => s.label)]}
      >
        {bins.map((bin, i) => (
          <tr key={bin.fromDays}>
            <th scope="row">{ageBin(bin)}</th>
            {SEVERITIES.map((s) => (
              <td key={s.key}>{metrics.bySeverity[s.key].openByAge[i]?.count ?? 0}</td>
            ))}
          </tr>
        ))}
      </DataTable>
    </figure>
  );
}
