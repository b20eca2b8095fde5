// Uploads a VEX document (OpenVEX 0.2.0, or CycloneDX 1.4–1.6 with analysis) to
// POST /applications/{id}/vex, chosen with the file picker or dropped on the box, as the report
// upload does. What the statements did is shown; the vulnerabilities they changed are refetched.
import { restRequest } from "../../rest.ts";
import { FileUploadForm, uploadHeaders } from "./file-upload-form.tsx";
import styles from "./forms.module.css";

interface VexOutcome {
  applied: number;
  unchanged: number;
  pending: number;
  errors: { path: string; message: string }[];
}

const statements = (n: number) => `${n} statement${n === 1 ? "" : "s"}`;

const vexType = (name: string) =>
  /\.(cdx|bom|vex\.cdx)\.json$/.test(name) ? "application/vnd.cyclonedx+json" : "application/json";

export function VexUpload({ applicationId, onApplied }: { applicationId: string; onApplied: () => void }) {
  return (
    <FileUploadForm<VexOutcome>
      id="vex"
      heading="Upload a VEX document"
      label="VEX document"
      accept=".json,.gz,application/json"
      hint="OpenVEX 0.2.0 or CycloneDX 1.4–1.6 VEX JSON (gzip accepted); or drop the file here."
      submit="Apply VEX"
      submitting="Applying…"
      nothingChosen={{ title: "No VEX document chosen", detail: "Choose a VEX file or drop one on the box first." }}
      send={async (file, token) => {
        const outcome = await restRequest<VexOutcome>(
          token,
          "POST",
          `/applications/${encodeURIComponent(applicationId)}/vex`,
          { body: file, headers: uploadHeaders(file, vexType) },
        );
        onApplied();
        return outcome;
      }}
      result={(outcome) => (
        <>
          <p class={styles.outcome}>
            VEX document applied: {outcome.applied} applied (a vulnerability's status or analysis changed),{" "}
            {outcome.unchanged} unchanged, {outcome.pending} pending (kept for findings not seen yet).
          </p>
          {outcome.errors.length > 0 && (
            <>
              <p class={styles.outcome}>{statements(outcome.errors.length)} could not apply:</p>
              <ul class={styles.outcome}>
                {outcome.errors.map((e) => (
                  <li key={e.path}>
                    <code>{e.path}</code>: {e.message}
                  </li>
                ))}
              </ul>
            </>
          )}
        </>
      )}
    />
  );
}
