// How the remediation figures read: days to one decimal, shares as percentages, age bins in words.
export const SEVERITIES = [
  { key: "critical", label: "Critical", color: "#b42318", dash: [] },
  { key: "high", label: "High", color: "#c4320a", dash: [] },
  { key: "medium", label: "Medium", color: "#a15c07", dash: [] },
  { key: "low", label: "Low", color: "#1f4e8c", dash: [] },
] as const;

export const days = (value: number | null): string => (value === null ? "—" : value.toFixed(1));

export const share = (value: number | null): string => (value === null ? "—" : `${Math.round(value * 100)}%`);

export const ageBin = ({ fromDays, toDays }: { fromDays: number; toDays: number | null }): string =>
  toDays === null ? `${fromDays} days or more` : `${fromDays}–${toDays} days`;
