// Uploads a scanner report (SARIF, CycloneDX, Trivy, Grype, ZAP) to POST /applications/{id}/scan-reports:
// chosen with the file picker or dropped on the box. The scan it creates then shows up live.
import { useState } from "preact/hooks";
import type { ApiError } from "../../api-error.ts";
import { ErrorNotice } from "../../components/error-notice.tsx";
import { ApiRequestError, restRequest } from "../../rest.ts";
import { useSession } from "../../session.ts";
import styles from "./forms.module.css";

function contentHeaders(file: File): Record<string, string> {
  const name = file.name.toLowerCase();
  const gzip = name.endsWith(".gz");
  const base = gzip ? name.slice(0, -3) : name;
  const type = base.endsWith(".sarif") ? "application/sarif+json" : /\.(cdx|bom)\.json$/.test(base) ? "application/vnd.cyclonedx+json" : "application/json";
  return { "content-type": type, ...(gzip && { "content-encoding": "gzip" }) };
}

export function ReportUpload({ applicationId }: { applicationId: string }) {
  const { token } = useSession();
  const [file, setFile] = useState<File | null>(null);
  const [dragging, setDragging] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const [done, setDone] = useState<string | null>(null);

  const upload = async (event: Event) => {
    event.preventDefault();
    if (!file || !token) return setError({ title: "No report chosen", detail: "Choose a report file or drop one on the box first." });
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      const scan = await restRequest<{ id: string; scanType: string; source?: { tool?: string } }>(
        token,
        "POST",
        `/applications/${encodeURIComponent(applicationId)}/scan-reports`,
        { body: file, headers: contentHeaders(file) },
      );
      setDone(`Report accepted: a ${scan.scanType} scan${scan.source?.tool ? ` by ${scan.source.tool}` : ""} was recorded.`);
    } catch (err) {
      setError(err instanceof ApiRequestError ? err.apiError : { title: "The upload failed", detail: (err as Error).message });
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class={styles.form} onSubmit={upload} aria-labelledby="upload-heading">
      <h3 id="upload-heading">Upload a scanner report</h3>
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
        <label for="report-file">Scanner report</label>
        <input id="report-file" type="file" accept=".json,.sarif,.gz,application/json" onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
        <p class={styles.hint}>SARIF, CycloneDX, Trivy, Grype or ZAP JSON (gzip accepted); or drop the file here.{file ? ` Chosen: ${file.name}.` : ""}</p>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? "Uploading…" : "Upload report"}
        </button>
      </div>
      <p role="status" class={styles.status}>
        {done}
      </p>
      {error && <ErrorNotice error={error} />}
    </form>
  );
}
