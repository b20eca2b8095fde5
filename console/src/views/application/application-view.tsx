import { fromCombinedError } from "../../api-error.ts";
import { Badge, SeverityCounts } from "../../components/badges.tsx";
import { ErrorNotice } from "../../components/error-notice.tsx";
import { Loading } from "../../components/states.tsx";
import { RecentChangesSection } from "./recent-changes-section.tsx";
import { ReportUpload } from "./report-upload.tsx";
import { ScansSection } from "./scans-section.tsx";
import { TrendSection } from "./trend-section.tsx";
import { TriggerScan } from "./trigger-scan.tsx";
import { useApplicationDetails, useApplicationLive } from "./use-application.ts";
import { useRecentChanges } from "./use-recent-changes.ts";
import { VexUpload } from "./vex-upload.tsx";
import { VulnerabilitiesSection } from "./vulnerabilities-section.tsx";
import styles from "./application-view.module.css";

export function ApplicationView({ id }: { id: string }) {
  const { events, refreshes, refresh } = useApplicationLive(id);
  const recentChanges = useRecentChanges(id);
  // A change arriving live changed the details too (its description, owner, tags…).
  const details = useApplicationDetails(id, refreshes + recentChanges.live);
  if (details.error && !details.data) {
    return (
      <>
        <h1 tabIndex={-1}>Application</h1>
        <ErrorNotice error={fromCombinedError(details.error)} />
        <p>
          Back to the <a href="/">portfolio</a>.
        </p>
      </>
    );
  }
  const app = details.data?.application;
  return (
    <>
      <p class={styles.crumbs}>
        <a href="/">Portfolio</a> /
      </p>
      <h1 tabIndex={-1}>{app?.name ?? "Application"}</h1>
      {!app ? (
        <Loading what="the application" />
      ) : (
        <>
          {app.description && <p>{app.description}</p>}
          <dl class={styles.facts}>
            <dt>Owner</dt>
            <dd>{app.owner ?? "—"}</dd>
            <dt>Criticality</dt>
            <dd>
              <Badge kind="criticality" value={app.criticality} />
            </dd>
            <dt>Gate</dt>
            <dd>
              <Badge kind="decision" value={app.policyEvaluation.decision} />
              {app.policyEvaluation.violations.length > 0 && (
                <ul class={styles.violations}>
                  {app.policyEvaluation.violations.map((v) => (
                    <li key={v.policyId}>
                      {v.policyName} ({v.action.toLowerCase()}): {v.vulnerabilityIds.length} vulnerabilit
                      {v.vulnerabilityIds.length === 1 ? "y" : "ies"}
                    </li>
                  ))}
                </ul>
              )}
            </dd>
            <dt>Open vulnerabilities</dt>
            <dd>
              <SeverityCounts counts={app.vulnerabilityCounts.unresolvedBySeverity} />
            </dd>
            <dt>Past their deadline</dt>
            <dd>
              {app.vulnerabilityCounts.breached} breached (
              <a href={`/console/remediation?application=${encodeURIComponent(app.id)}`}>remediation figures</a>)
            </dd>
            {app.language && (
              <>
                <dt>Language</dt>
                <dd>{app.language}</dd>
              </>
            )}
            {app.repoUrl && (
              <>
                <dt>Repository</dt>
                <dd>{app.repoUrl}</dd>
              </>
            )}
            {app.serviceUrl && (
              <>
                <dt>Service</dt>
                <dd>{app.serviceUrl}</dd>
              </>
            )}
            {app.tags.length > 0 && (
              <>
                <dt>Tags</dt>
                <dd>{app.tags.join(", ")}</dd>
              </>
            )}
          </dl>
          {details.error && <ErrorNotice error={fromCombinedError(details.error)} />}
        </>
      )}
      <section aria-labelledby="scans-heading">
        <h2 id="scans-heading">Scans</h2>
        <div class={styles.actions}>
          <TriggerScan applicationId={id} />
          <ReportUpload applicationId={id} />
        </div>
        <ScansSection applicationId={id} events={events} refreshes={refreshes} />
      </section>
      <section aria-labelledby="trend-heading">
        <h2 id="trend-heading">Open vulnerabilities over time</h2>
        <TrendSection applicationId={id} refreshes={refreshes} />
      </section>
      <section aria-labelledby="vulnerabilities-heading">
        <h2 id="vulnerabilities-heading">Vulnerabilities</h2>
        <div class={styles.actions}>
          <VexUpload applicationId={id} onApplied={refresh} />
        </div>
        <VulnerabilitiesSection applicationId={id} refreshes={refreshes} onTriaged={refresh} />
      </section>
      <section aria-labelledby="changes-heading">
        <h2 id="changes-heading">Recent changes</h2>
        <RecentChangesSection changes={recentChanges.changes} />
      </section>
    </>
  );
}
