// The remediation view (/console/remediation): how fast vulnerabilities are remediated and how old
// the open ones are (remediationMetrics, docs/spec/CONTRACT.md §19), for the portfolio, a team or an
// application, the choice kept in the address (?owner=team-a&application=<id>) so it can be shared
// or reloaded. Each chart's numbers are in a table beside it.
import { useLocation } from "preact-iso";
import { fromCombinedError } from "../../api-error.ts";
import { ErrorNotice } from "../../components/error-notice.tsx";
import { Loading } from "../../components/states.tsx";
import { Time } from "../../components/time.tsx";
import { OpenByAge } from "./open-by-age.tsx";
import { RemediationFilters } from "./remediation-filters.tsx";
import { TimeToRemediate } from "./time-to-remediate.tsx";
import { useApplicationChoices, useRemediationMetrics } from "./use-remediation.ts";
import styles from "./remediation-view.module.css";

export function RemediationView() {
  const { path, query, route } = useLocation();
  const owner = query.owner || null;
  const applicationId = query.application || null;
  const choices = useApplicationChoices();
  const result = useRemediationMetrics(applicationId, owner);
  const choose = (name: "owner" | "application", value: string | null) => {
    const params = new URLSearchParams(query);
    if (value) params.set(name, value);
    else params.delete(name);
    // Another team: the application chosen may not be one of its own.
    if (name === "owner") params.delete("application");
    const search = params.toString();
    route(search ? `${path}?${search}` : path, true);
  };
  const metrics = result.data?.remediationMetrics;
  // Whose figures these are, as the answer says: while another choice's figures load, the last
  // ones stay on screen under their own names.
  const application = metrics?.applicationId && choices.applications?.find((a) => a.id === metrics.applicationId);
  const scope = metrics?.applicationId
    ? application
      ? application.name
      : "the application chosen"
    : metrics?.owner
      ? `applications owned by ${metrics.owner}`
      : "every application";
  return (
    <>
      <h1 tabIndex={-1}>Remediation</h1>
      <RemediationFilters choices={choices} owner={owner} applicationId={applicationId} onChange={choose} />
      {result.error && <ErrorNotice error={fromCombinedError(result.error)} />}
      {!metrics ? (
        !result.error && <Loading what="the remediation figures" />
      ) : (
        <>
          <p class={styles.period} aria-busy={result.fetching}>
            Resolutions from <Time value={metrics.from} /> to <Time value={metrics.to} />; open and breached ones now.
          </p>
          <section aria-labelledby="mttr-heading">
            <h2 id="mttr-heading">Time to remediate</h2>
            <TimeToRemediate metrics={metrics} scope={scope} />
          </section>
          <section aria-labelledby="age-heading">
            <h2 id="age-heading">Open vulnerabilities by age</h2>
            <OpenByAge metrics={metrics} scope={scope} />
          </section>
        </>
      )}
    </>
  );
}
