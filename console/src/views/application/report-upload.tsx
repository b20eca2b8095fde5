// Uploads a scanner report (SARIF, CycloneDX, Trivy, Grype, ZAP) to POST /applications/{id}/scan-reports:
// chosen with the file picker or dropped on the box. The scan it creates then shows up live.
import { restRequest } from "../../rest.ts";
import { FileUploadForm, uploadHeaders } from "./file-upload-form.tsx";

const reportType = (name: string) =>
  name.endsWith(".sarif")
    ? "application/sarif+json"
    : /\.(cdx|bom)\.json$/.test(name)
      ? "application/vnd.cyclonedx+json"
      : "application/json";

interface RecordedScan {
  id: string;
  scanType: string;
  source?: { tool?: string };
}

export function ReportUpload({ applicationId }: { applicationId: string }) {
  return (
    <FileUploadForm<RecordedScan>
      id="upload"
      heading="Upload a scanner report"
      label="Scanner report"
      accept=".json,.sarif,.gz,application/json"
      hint="SARIF, CycloneDX, Trivy, Grype or ZAP JSON (gzip accepted); or drop the file here."
      submit="Upload report"
      submitting="Uploading…"
      nothingChosen={{ title: "No report chosen", detail: "Choose a report file or drop one on the box first." }}
      send={(file, token) =>
        restRequest<RecordedScan>(token, "POST", `/applications/${encodeURIComponent(applicationId)}/scan-reports`, {
          body: file,
          headers: uploadHeaders(file, reportType),
        })
      }
      result={(scan) => (
        <p>
          Report accepted: a {scan.scanType} scan{scan.source?.tool ? ` by ${scan.source.tool}` : ""} was recorded.
        </p>
      )}
    />
  );
}
