// What a completed scan's findings do to the application's vulnerabilities (docs/spec/CONTRACT.md §5). Runs
// inside the scan's completing transaction, which also carries the events it records. A report
// may hold 100,000 findings, handed over in batches as its reader maps them: every statement takes
// them as array parameters (one bind parameter per column, whatever the count), in chunks, rather
// than through the ORM's row-by-row encoding.
import type { Tx } from "../../db/client.ts";
import { recordEvents } from "../../events/outbox.ts";
import type { Scan, Vulnerability } from "../../generated/prisma/client.ts";
import { newId } from "../../ids.ts";
import { chunksOf } from "../chunks.ts";
import { summarize, type ScanSummary } from "../scans/scan-summary.ts";
import { STATUS_OF_STATE, type Analysis, type VulnerabilityStatus } from "./analysis.ts";
import { WHOLE_SCOPE, type Finding, type FindingBatches, type ReportCoverage } from "./finding.ts";
import { decideNewVulnerabilities } from "./kept-statements.ts";
import { canonicalIds } from "./vulnerability-ids.ts";
import {
  toVulnerabilityCreatedData,
  toVulnerabilityResolvedData,
  toVulnerabilityUpdatedData,
} from "./vulnerability.view.ts";

/**
 * Rows per statement: large enough to amortise the round trip, small enough to bound memory.
 * Prisma's client keeps the arguments of its last 100 debug calls (about 20 statements), debug
 * output on or off, so what a statement's parameters weigh stays alive for the next 20: 1,000
 * rows keep that near 50 MiB, where 5,000 kept some 250 MiB.
 */
const CHUNK = 1_000;

export interface FindingsOutcome {
  created: number;
  seenAgain: number;
  reopened: number;
  resolved: number;
  /** The distinct findings (the same fingerprint reported twice by one scan counts once), by severity. */
  summary: ScanSummary;
}

/** How a scan's changes appear in the history: `report` when its findings came from an uploaded report. */
const sourceOf = (scan: Scan) => (scan.sourceKind === "report" ? "report" : "scan");

/** The report's own decision about a finding, as stored (who and when are the scan's). */
const reportedAnalysis = (f: Finding, scan: Scan, now: Date): Analysis | null =>
  f.analysis ? { ...f.analysis, source: "report", by: scan.triggeredBy, at: now.toISOString() } : null;

const jsonOrNull = (value: unknown) => (value === null ? null : JSON.stringify(value));

interface SeenRow {
  fingerprint: string;
  previous: VulnerabilityStatus;
  status: VulnerabilityStatus;
  took_report: boolean;
  /** What its vulnerability.updated event needs: only for a row that took the report's decision. */
  decided: {
    id: string;
    status: VulnerabilityStatus;
    analysis: unknown;
    severity: Finding["severity"];
    title: string;
    created_at: string;
  } | null;
}

/**
 * Marks the ones the application already has as seen by this scan; returns them. A `resolved` one
 * goes back to `open`, unless a VEX said it is fixed; the report's own decision (its analysis, its
 * suppressions) applies, unless the vulnerability is `accepted` or decided by a VEX, which a scan
 * never overrides (docs/spec/CONTRACT.md §13). Changes of status go into the history in the same statement.
 */
async function markSeen(tx: Tx, scan: Scan, findings: readonly Finding[], now: Date): Promise<SeenRow[]> {
  return tx.$queryRaw<SeenRow[]>`
    WITH reported AS (
      SELECT * FROM unnest(${findings.map((f) => f.fingerprint)}::text[], ${findings.map((f) => (f.analysis ? STATUS_OF_STATE[f.analysis.state] : null))}::text[],
                           ${findings.map((f) => jsonOrNull(reportedAnalysis(f, scan, now)))}::jsonb[],
                           ${findings.map((f) => f.part ?? null)}::text[]) AS r(fingerprint, status, analysis, part)
    ), known AS (
      SELECT v.id, v.status::text AS previous, coalesce(v.analysis->>'source', '') = 'vex' AS by_vex, r.status AS reported_status,
             r.analysis AS reported_analysis, r.part AS reported_part,
             (r.analysis IS NOT NULL AND v.status <> 'accepted' AND coalesce(v.analysis->>'source', '') <> 'vex'
              AND (v.analysis IS NULL OR v.analysis - '{source,by,at}'::text[] <> r.analysis - '{source,by,at}'::text[])) AS took_report
        FROM vulnerabilities v JOIN reported r ON r.fingerprint = v.fingerprint
       -- ANY as well as the join: the planner then looks the chunk up in (application_id, fingerprint)
       -- instead of reading all the application's rows for each chunk (100,000 of them, 100 times).
       WHERE v.application_id = ${scan.applicationId}::uuid AND v.fingerprint = ANY(${findings.map((f) => f.fingerprint)}::text[])
       FOR UPDATE OF v
    ), next AS (
      SELECT known.*, CASE WHEN took_report THEN reported_status WHEN previous = 'resolved' AND NOT by_vex THEN 'open' ELSE previous END AS status
        FROM known
    ), updated AS (
      UPDATE vulnerabilities v
         SET last_seen_scan_id = ${scan.id}::uuid,
             status = n.status::"VulnerabilityStatus",
             analysis = CASE WHEN n.took_report THEN n.reported_analysis ELSE v.analysis END,
             report_part = coalesce(n.reported_part, v.report_part),
             updated_at = CASE WHEN n.status <> n.previous OR n.took_report THEN ${now} ELSE v.updated_at END,
             resolved_at = CASE WHEN n.status <> 'resolved' THEN NULL WHEN n.previous = 'resolved' THEN v.resolved_at ELSE ${now} END
        FROM next n
       WHERE v.id = n.id
      RETURNING v.id, v.fingerprint, n.previous, n.status, n.took_report, v.analysis, v.severity::text AS severity, v.title, v.created_at
    ), history AS (
      INSERT INTO vulnerability_changes (vulnerability_id, at, from_status, to_status, source, scan_id, by, justification, detail)
      SELECT id, ${now}, previous::"VulnerabilityStatus", status::"VulnerabilityStatus", ${sourceOf(scan)}::"ChangeSource", ${scan.id}::uuid,
             ${scan.triggeredBy}, CASE WHEN took_report THEN analysis->>'justification' END, CASE WHEN took_report THEN analysis->>'detail' END
        FROM updated
       WHERE status <> previous OR took_report
    )
    -- Most rows only move last_seen_scan_id: the event's fields travel for the decided ones alone.
    SELECT fingerprint, previous, status, took_report,
           CASE WHEN took_report THEN json_build_object('id', id, 'status', status, 'analysis', analysis, 'severity', severity, 'title', title, 'created_at', created_at) END AS decided
      FROM updated`;
}

/** A new finding with what its row is given: its id, ids, status and analysis. */
type NewFinding = Finding & { id: string; ids: string[] };

/**
 * Inserts the new ones, `open` or as the report decided, each with its creation in the history;
 * ON CONFLICT: one another transaction created meanwhile is simply not new here. Returns the ids
 * inserted.
 */
async function insertNew(tx: Tx, scan: Scan, findings: readonly NewFinding[], now: Date): Promise<Set<string>> {
  const column = <K extends keyof NewFinding>(key: K) => findings.map((f) => f[key]);
  const rows = await tx.$queryRaw<{ id: string }[]>`
    WITH inserted AS (
      INSERT INTO vulnerabilities (id, application_id, scan_id, scan_type, fingerprint, title, description, severity, cwe, cve,
                                   cvss_score, status, introduced_in, remediation, package_name, package_version, location, tool,
                                   last_seen_scan_id, created_at, updated_at, aliases, analysis, report_part)
      SELECT f.id, ${scan.applicationId}::uuid, ${scan.id}::uuid, ${scan.scanType}::"ScanType", f.fingerprint, f.title, f.description,
             f.severity::"Severity", f.cwe, f.cve, f.cvss_score, coalesce(f.status, 'open')::"VulnerabilityStatus", f.introduced_in, f.remediation,
             f.package_name, f.package_version, f.location, ${scan.sourceTool}, ${scan.id}::uuid, ${now}, ${now},
             ARRAY(SELECT jsonb_array_elements_text(f.ids)), f.analysis, f.part
        FROM unnest(${column("id")}::uuid[], ${column("fingerprint")}::text[], ${column("title")}::text[], ${column("description")}::text[],
                    ${column("severity")}::text[], ${column("cwe")}::text[], ${column("cve")}::text[], ${column("cvssScore")}::float8[],
                    ${column("introducedIn")}::text[], ${column("remediation")}::text[], ${column("packageName")}::text[],
                    ${column("packageVersion")}::text[], ${column("location")}::text[], ${findings.map((f) => JSON.stringify(f.ids))}::jsonb[],
                    ${findings.map((f) => (f.analysis ? STATUS_OF_STATE[f.analysis.state] : null))}::text[],
                    ${findings.map((f) => jsonOrNull(reportedAnalysis(f, scan, now)))}::jsonb[],
                    ${findings.map((f) => f.part ?? null)}::text[])
          AS f(id, fingerprint, title, description, severity, cwe, cve, cvss_score, introduced_in, remediation, package_name, package_version,
               location, ids, status, analysis, part)
      ON CONFLICT (application_id, fingerprint) DO NOTHING
      RETURNING id, status, analysis
    ), history AS (
      INSERT INTO vulnerability_changes (vulnerability_id, at, from_status, to_status, source, scan_id, by, justification, detail)
      SELECT id, ${now}, NULL, status, ${sourceOf(scan)}::"ChangeSource", ${scan.id}::uuid, ${scan.triggeredBy},
             analysis->>'justification', analysis->>'detail'
        FROM inserted
    )
    SELECT id::text FROM inserted`;
  return new Set(rows.map((r) => r.id));
}

/**
 * Resolves the open or in-progress ones of the scan's type and tool it no longer reports, within
 * what it covered, each with its history row. A finding recorded without a part is covered by a
 * report in parts only when that report lists some and none of them failed.
 */
async function resolveUnreported(
  tx: Tx,
  scan: Scan,
  fingerprints: readonly string[],
  now: Date,
  coverage: ReportCoverage,
) {
  const whole = coverage.parts === null;
  const parts = coverage.parts ?? [];
  const unattributed = !whole && parts.length > 0 && !coverage.partFailed;
  return tx.$queryRaw<{ id: string; severity: Finding["severity"]; title: string; created_at: Date }[]>`
    WITH resolved AS (
      UPDATE vulnerabilities v
         SET status = 'resolved', resolved_at = ${now}, updated_at = ${now}
        FROM (SELECT id, status FROM vulnerabilities
               WHERE application_id = ${scan.applicationId}::uuid AND scan_type::text = ${scan.scanType} AND tool = ${scan.sourceTool}
                 AND status IN ('open', 'in_progress') AND NOT (fingerprint = ANY(${fingerprints}::text[]))
                 AND (${whole}::boolean OR report_part = ANY(${parts}::text[]) OR (report_part IS NULL AND ${unattributed}::boolean))
                 FOR UPDATE) previous
       WHERE v.id = previous.id
      RETURNING v.id, previous.status AS previous, v.severity, v.title, v.created_at
    ), history AS (
      INSERT INTO vulnerability_changes (vulnerability_id, at, from_status, to_status, source, scan_id, by)
      SELECT id, ${now}, previous, 'resolved', ${sourceOf(scan)}::"ChangeSource", ${scan.id}::uuid, ${scan.triggeredBy} FROM resolved
    )
    SELECT id::text, severity::text, title, created_at FROM resolved`;
}

/**
 * One chunk of distinct findings: the known ones marked seen, the others inserted with their
 * events, then decided by the VEX statements kept for the application.
 */
async function recordChunk(tx: Tx, scan: Scan, findings: readonly Finding[], now: Date, hasStatements: boolean) {
  const { applicationId } = scan;
  const known = new Set<string>();
  let reopened = 0;
  const decidedByReport: NonNullable<SeenRow["decided"]>[] = [];
  for (const row of await markSeen(tx, scan, findings, now)) {
    known.add(row.fingerprint);
    if (row.previous === "resolved" && row.status === "open") reopened++;
    if (row.decided) decidedByReport.push(row.decided);
  }
  const fresh = findings
    .filter((f) => !known.has(f.fingerprint))
    .map((f): NewFinding => ({ ...f, id: newId(), ids: canonicalIds(f.aliases ?? [f.cve]) }));
  const inserted = fresh.length > 0 ? await insertNew(tx, scan, fresh, now) : new Set<string>();
  const created = fresh.filter((f) => inserted.has(f.id));
  await recordEvents(tx, [
    ...created.map((f) => ({
      type: "vulnerability.created" as const,
      data: toVulnerabilityCreatedData({
        id: f.id,
        severity: f.severity,
        applicationId,
        title: f.title,
        createdAt: now,
      }),
      applicationId,
      occurredAt: now,
    })),
    // The report's own decision changed a known vulnerability's record.
    ...decidedByReport.map((row) => ({
      type: "vulnerability.updated" as const,
      data: toVulnerabilityUpdatedData({
        ...row,
        applicationId,
        createdAt: new Date(row.created_at),
        analysis: row.analysis as never,
      }),
      applicationId,
      occurredAt: now,
    })),
  ]);
  if (hasStatements && created.length > 0) {
    await decideNewVulnerabilities(
      tx,
      applicationId,
      created.map((f) => ({
        id: f.id,
        applicationId,
        status: f.analysis ? STATUS_OF_STATE[f.analysis.state] : "open",
        analysis: reportedAnalysis(f, scan, now) as Vulnerability["analysis"],
        severity: f.severity,
        title: f.title,
        createdAt: now,
        aliases: f.ids,
        location: f.location,
      })),
    );
  }
  return { created: created.length, seenAgain: known.size, reopened };
}

/**
 * Dedup by fingerprint per application: a new finding creates a vulnerability
 * (vulnerability.created), `open` or as the report's own analysis says, then decided by the VEX
 * statements kept for the application; one seen again only moves last_seen_scan_id, and goes back
 * to `open` when it was `resolved` (no event: it is the same vulnerability, not a new one) unless
 * a VEX said it is fixed; an `open` or `in_progress` one of the scan's type and tool, within what
 * the scan covered, that this scan did not report is `resolved` (vulnerability.resolved);
 * `accepted` stays `accepted`. Every change of status is in the history.
 */
export async function recordFindings(
  tx: Tx,
  scan: Scan,
  batches: FindingBatches,
  coverage: ReportCoverage = WHOLE_SCOPE,
): Promise<FindingsOutcome> {
  const now = new Date();
  const reported = new Set<string>();
  const summary = summarize([]);
  let created = 0;
  let seenAgain = 0;
  let reopened = 0;
  const [{ exists: hasStatements }] = await tx.$queryRaw<[{ exists: boolean }]>`
    SELECT EXISTS (SELECT 1 FROM vex_statements WHERE application_id = ${scan.applicationId}::uuid)`;
  for await (const batch of batches) {
    const distinct = batch.filter((f) => !reported.has(f.fingerprint) && reported.add(f.fingerprint));
    for (const { severity } of distinct) summary[severity] += 1;
    for (const chunk of chunksOf(distinct, CHUNK)) {
      const outcome = await recordChunk(tx, scan, chunk, now, hasStatements);
      created += outcome.created;
      seenAgain += outcome.seenAgain;
      reopened += outcome.reopened;
    }
  }

  const { applicationId } = scan;
  const resolved = await resolveUnreported(tx, scan, [...reported], now, coverage);
  for (const chunk of chunksOf(resolved, CHUNK)) {
    await recordEvents(
      tx,
      chunk.map((v) => ({
        type: "vulnerability.resolved",
        data: toVulnerabilityResolvedData({
          id: v.id,
          severity: v.severity,
          applicationId,
          title: v.title,
          createdAt: v.created_at,
          status: "resolved",
        }),
        applicationId,
        occurredAt: now,
      })),
    );
  }

  return {
    created,
    seenAgain,
    reopened,
    resolved: resolved.length,
    summary: { ...summary, totalFindings: reported.size },
  };
}
