// Whose remediation figures: every application the token sees, one team's (by owner), or one
// application's, chosen among the applications it sees.
import { fromCombinedError } from "../../api-error.ts";
import { ErrorNotice } from "../../components/error-notice.tsx";
import type { ApplicationChoices } from "./use-remediation.ts";
import styles from "./remediation-view.module.css";

interface RemediationFiltersProps {
  choices: ApplicationChoices;
  owner: string | null;
  applicationId: string | null;
  onChange: (name: "owner" | "application", value: string | null) => void;
}

export function RemediationFilters({ choices, owner, applicationId, onChange }: RemediationFiltersProps) {
  const { applications, error } = choices;
  const busy = applications === null && !error;
  // The chosen owner stays listed while the applications load, or when none of its applications is left.
  const owners = [
    ...new Set([...(applications ?? []).flatMap((a) => (a.owner ? [a.owner] : [])), ...(owner ? [owner] : [])]),
  ].sort();
  const offered = (applications ?? []).filter((a) => owner === null || a.owner === owner);
  return (
    <form class={styles.filters} onSubmit={(e) => e.preventDefault()} aria-label="Whose figures">
      <div>
        <label for="remediation-owner">Team</label>
        <select
          id="remediation-owner"
          value={owner ?? ""}
          aria-busy={busy}
          onChange={(e) => onChange("owner", e.currentTarget.value || null)}
        >
          <option value="">all teams</option>
          {owners.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label for="remediation-application">Application</label>
        <select
          id="remediation-application"
          value={applicationId ?? ""}
          aria-busy={busy}
          onChange={(e) => onChange("application", e.currentTarget.value || null)}
        >
          <option value="">all applications</option>
          {applicationId && !offered.some((a) => a.id === applicationId) && (
            <option value={applicationId}>this application</option>
          )}
          {offered.map((a) => (
            <option key={a.id} value={a.id}>
              {a.name}
            </option>
          ))}
        </select>
      </div>
      {error && <ErrorNotice error={fromCombinedError(error)} />}
    </form>
  );
}
