import { z } from "zod";

export const SCAN_TYPES = ["sast", "dast", "sca", "container"] as const;
export type ScanType = (typeof SCAN_TYPES)[number];
export const SCAN_STATUSES = ["queued", "running", "completed", "failed"] as const;

// Read-only fields a client may echo back; they are ignored (docs/spec/CONTRACT.md §2).

export const triggerScanSchema = z.strictObject({
  scanType: z.enum(SCAN_TYPES),
  triggeredBy: z.string().max(200, "Must be at most 200 characters").nullable().optional(),
});
export type TriggerScanInput = z.infer<typeof triggerScanSchema>;

/** Scanner report formats the service reads (docs/spec/CONTRACT.md §11). */
export const REPORT_FORMATS = ["sarif", "cyclonedx", "trivy", "grype", "zap"] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];
