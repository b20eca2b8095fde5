// Uploads a VEX document (OpenVEX 0.2.0, or CycloneDX 1.4–1.6 with analysis) to
// POST /applications/{id}/vex, chosen with the file picker or dropped on the box, as the report
// upload does. What the statements did is shown; the vulnerabilities they changed are refetched.
import { useState } from "preact/hooks";
import type { ApiError } from "../../api-error.ts";
import { ErrorNotice } from "../../components/error-notice.tsx";
import { ApiRequestError, restRequest } from "../../rest.ts";
import { useSession } from "../../session.ts";
import styles from "./forms.module.css";

interface VexOutcome {
  applied: number;
  unchanged: number;
  pending: number;
  errors: { path: string; message: string }[];
}

const statements = (n: number) => `${n} statement${n === 1 ? "" : "s"}`;

function contentHeaders(file: File): Record<string, string> {
  const name = file.name.toLowerCase();
  const gzip = name.endsWith(".gz");
  const base = gzip ? name.slice(0, -3) : name;
  const type = /\.(cdx|bom|vex\.cdx)\.json$/.test(base) ? "application/vnd.cyclonedx+json" : "application/json";
  return { "content-type": type, ...(gzip && { "content-encoding": "gzip" }) };
}

export function VexUpload({ applicationId, onApplied }: { applicationId: string; onApplied: () => void }) {
  const { token } = useSession();
  const [file, setFile] = useState<File | null>(null);
  const [dragging, setDragging] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const [outcome, setOutcome] = useState<VexOutcome | null>(null);

  const upload = async (event: Event) => {
    event.preventDefault();
    if (!file || !token) return setError({ title: "No VEX document chosen", detail: "Choose a VEX file or drop one on the box first." });
    setBusy(true);
    setError(null);
    setOutcome(null);
    try {
      setOutcome(await restRequest<VexOutcome>(token, "POST", `/applications/${encodeURIComponent(applicationId)}/vex`, { body: file, headers: contentHeaders(file) }));
      onApplied();
    } catch (err) {
      setError(err instanceof ApiRequestError ? err.apiError : { title: "The upload failed", detail: (err as Error).message });
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class={styles.form} onSubmit={upload} aria-labelledby="vex-heading">
      <h3 id="vex-heading">Upload a VEX document</h3>
      <div
        class={`${styles.drop} ${dragging ? styles.dragging : ""}`}
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(e) => {
          e.preventDefault();
          setDragging(false);
          const dropped = e.dataTransfer?.files[0];
          if (dropped) setFile(dropped);
        }}
      >
        <label for="vex-file">VEX document</label>
        <input id="vex-file" type="file" accept=".json,.gz,application/json" onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
        <p class={styles.hint}>OpenVEX 0.2.0 or CycloneDX 1.4–1.6 VEX JSON (gzip accepted); or drop the file here.{file ? ` Chosen: ${file.name}.` : ""}</p>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? "Applying…" : "Apply VEX"}
        </button>
      </div>
      <div role="status" class={styles.status}>
        {outcome && (
          <>
            <p class={styles.outcome}>
              VEX document applied: {outcome.applied} applied (a vulnerability's status or analysis changed), {outcome.unchanged} unchanged,{" "}
              {outcome.pending} pending (kept for findings not seen yet).
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
      </div>
      {error && <ErrorNotice error={error} />}
    </form>
  );
}
