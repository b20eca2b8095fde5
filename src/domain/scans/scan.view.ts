// The Scan as callers see it (REST bodies and the scan.* event data, which omits createdAt).
import { z } from "zod";
import type { Scan } from "../../generated/prisma/client.ts";
import type { ScanEventData } from "../../events/catalog.ts";
import { REPORT_FORMATS, SCAN_STATUSES, SCAN_TYPES } from "./scans.schemas.ts";
import type { ScanSummary } from "./scan-summary.ts";

export const scanSummarySchema = z
  .object({
    totalFindings: z.int(),
    critical: z.int(),
    high: z.int(),
    medium: z.int(),
    low: z.int(),
  })
  .meta({ id: "ScanSummary" });

export const scanSourceSchema = z
  .object({
    kind: z.enum(["engine", "report"]),
    format: z.enum(REPORT_FORMATS).nullable(),
    tool: z.string(),
    toolVersion: z.string().nullable(),
  })
  .describe("Where the findings come from: the built-in engine for the type, or an uploaded report (extension)")
  .meta({ id: "ScanSource" });

export const scanFailureSchema = z
  .object({ reason: z.string() })
  .describe("Why a failed scan failed (extension); null unless the scan is failed")
  .meta({ id: "ScanFailure" });

export const scanViewSchema = z
  .object({
    id: z.string(),
    applicationId: z.string(),
    scanType: z.enum(SCAN_TYPES),
    status: z.enum(SCAN_STATUSES),
    triggeredBy: z.string().nullable(),
    startedAt: z.iso.datetime().nullable(),
    completedAt: z.iso.datetime().nullable(),
    summary: scanSummarySchema.nullable(),
    createdAt: z.iso.datetime(),
    source: scanSourceSchema,
    failure: scanFailureSchema.nullable(),
  })
  .meta({ id: "Scan" });

export type ScanView = z.infer<typeof scanViewSchema>;

export const toScanEventData = (s: Scan): ScanEventData => ({
  id: s.id,
  applicationId: s.applicationId,
  scanType: s.scanType,
  status: s.status,
  triggeredBy: s.triggeredBy,
  startedAt: s.startedAt?.toISOString() ?? null,
  completedAt: s.completedAt?.toISOString() ?? null,
  summary: s.summary ? inOrder(s.summary as unknown as ScanSummary) : null,
});

// jsonb stores keys in its own order; answer in the documented one.
const inOrder = ({ totalFindings, critical, high, medium, low }: ScanSummary): ScanSummary => ({
  totalFindings,
  critical,
  high,
  medium,
  low,
});

/** A failed scan's reason; null for any other status. */
export const failureOf = (s: Pick<Scan, "status" | "error">): { reason: string } | null =>
  s.status === "failed" ? { reason: s.error ?? "The scan failed" } : null;

export const toScanView = (s: Scan): ScanView =>
  ({
    ...toScanEventData(s),
    createdAt: s.createdAt.toISOString(),
    source: { kind: s.sourceKind, format: s.sourceFormat, tool: s.sourceTool, toolVersion: s.sourceToolVersion },
    failure: failureOf(s),
  }) as ScanView;
