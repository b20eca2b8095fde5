// Status words shown as badges. The words are the API's values in lower case, so what a person
// reads is what the API says.
import styles from "./badges.module.css";

const word = (value: string) => value.toLowerCase().replace(/_/g, " ");

export function Badge({
  value,
  kind,
}: {
  value: string;
  kind: "status" | "severity" | "decision" | "criticality" | "sla";
}) {
  return <span class={`${styles.badge} ${styles[`${kind}-${value.toLowerCase()}`] ?? ""}`}>{word(value)}</span>;
}

export interface SeverityCountsValue {
  critical: number;
  high: number;
  medium: number;
  low: number;
}

/** Counts by severity, each named (screen readers read "3 critical", not "3"). */
export function SeverityCounts({ counts }: { counts: SeverityCountsValue }) {
  return (
    <span class={styles.counts}>
      {(["critical", "high", "medium", "low"] as const).map((s) => (
        <span key={s} class={`${styles.count} ${counts[s] ? styles[`severity-${s}`] : styles.zero}`}>
          {counts[s]} {s}
        </span>
      ))}
    </span>
  );
}
