import { fromCombinedError } from "../../api-error.ts";
import { ErrorNotice } from "../../components/error-notice.tsx";
import styles from "./owner-filter.module.css";
import { useApplicationOwners } from "./use-portfolio.ts";

interface OwnerFilterProps {
  selected: string | null;
  onChange: (owner: string | null) => void;
}

/** Narrows the portfolio to one owning team, chosen among the owners of the applications the token sees. */
export function OwnerFilter({ selected, onChange }: OwnerFilterProps) {
  const { owners, error } = useApplicationOwners();
  // The chosen owner stays listed while the owners load, or when none of its applications is left.
  const choices = [...new Set([...(owners ?? []), ...(selected === null ? [] : [selected])])].sort();
  return (
    <form class={styles.filter} onSubmit={(e) => e.preventDefault()} aria-label="Filter applications">
      <label for="filter-owner">Team</label>
      <select
        id="filter-owner"
        value={selected ?? ""}
        aria-busy={owners === null && !error}
        onChange={(e) => onChange(e.currentTarget.value || null)}
      >
        <option value="">all teams</option>
        {choices.map((owner) => (
          <option key={owner} value={owner}>
            {owner}
          </option>
        ))}
      </select>
      {error && <ErrorNotice error={fromCombinedError(error)} />}
    </form>
  );
}
