// Open vulnerabilities by severity over time (Application.vulnerabilityTrend): a chart, named for
// assistive technology, with its numbers in a table one click away (the text alternative).
import { useState } from "preact/hooks";
import { fromCombinedError } from "../../api-error.ts";
import { DataTable } from "../../components/data-table.tsx";
import { ErrorNotice } from "../../components/error-notice.tsx";
import { Loading } from "../../components/states.tsx";
import { Time } from "../../components/time.tsx";
import { SERIES, TrendChart } from "./trend-chart.tsx";
import { useVulnerabilityTrend, type Period } from "./use-vulnerability-trend.ts";
import styles from "./trend-section.module.css";

const PERIODS: readonly Period[] = [
  { label: "last 7 days, hourly", days: 7, bucket: "HOUR" },
  { label: "last 30 days, daily", days: 30, bucket: "DAY" },
  { label: "last 90 days, daily", days: 90, bucket: "DAY" },
  { label: "last year, weekly", days: 364, bucket: "WEEK" },
];

export function TrendSection({ applicationId, refreshes }: { applicationId: string; refreshes: number }) {
  const [period, setPeriod] = useState(PERIODS[1]!);
  const result = useVulnerabilityTrend(applicationId, period, refreshes);
  const trend = result.data?.application.vulnerabilityTrend;
  const description = `Open and in-progress vulnerabilities by severity, ${period.label}`;
  return (
    <>
      <div class={styles.controls}>
        <label for="trend-period">Period</label>
        <select
          id="trend-period"
          value={period.label}
          onChange={(e) => setPeriod(PERIODS.find((p) => p.label === e.currentTarget.value) ?? PERIODS[1]!)}
        >
          {PERIODS.map((p) => (
            <option key={p.label} value={p.label}>
              {p.label}
            </option>
          ))}
        </select>
      </div>
      {result.error && <ErrorNotice error={fromCombinedError(result.error)} />}
      {!trend ? (
        !result.error && <Loading what="the trend" />
      ) : (
        <figure class={styles.figure} aria-labelledby="trend-caption">
          <figcaption id="trend-caption">{description}</figcaption>
          <ul class={styles.legend} aria-label="Legend">
            {SERIES.map((s) => (
              <li key={s.key}>
                <span class={`${styles.swatch} ${styles[s.key]}`} aria-hidden="true" />
                {s.label}: {trend.points.at(-1)?.[s.key] ?? 0} now
              </li>
            ))}
          </ul>
          <div role="img" aria-label={`Chart: ${description}. Its numbers are in the table below it.`}>
            <TrendChart points={trend.points} hourly={trend.bucket === "HOUR"} />
          </div>
          <details class={styles.numbers}>
            <summary>The chart's numbers</summary>
            <DataTable
              label="Open vulnerabilities over time"
              caption={`${description}: the count at each point`}
              columns={["At", "Critical", "High", "Medium", "Low"]}
            >
              {[...trend.points].reverse().map((p) => (
                <tr key={p.at}>
                  <th scope="row">
                    <Time value={p.at} />
                  </th>
                  <td>{p.critical}</td>
                  <td>{p.high}</td>
                  <td>{p.medium}</td>
                  <td>{p.low}</td>
                </tr>
              ))}
            </DataTable>
          </details>
        </figure>
      )}
    </>
  );
}
