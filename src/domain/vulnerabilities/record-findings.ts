// What a completed scan's findings do to the application's vulnerabilities (CONTRACT §5). Runs
// inside the scan's completing transaction, which also carries the events it records. A report
// may hold 100,000 findings, handed over in batches as its reader maps them: every statement takes
// them as array parameters (one bind parameter per column, whatever the count), in chunks, rather
// than through the ORM's row-by-row encoding.
import type { Tx } from "../../db/client.ts";
import { recordEvents } from "../../events/outbox.ts";
import type { Scan } from "../../generated/prisma/client.ts";
import { newId } from "../../ids.ts";
import { chunksOf } from "../chunks.ts";
import { summarize, type ScanSummary } from "../scans/scan-summary.ts";
import type { Finding, FindingBatches } from "./finding.ts";
import { toVulnerabilityCreatedData, toVulnerabilityResolvedData } from "./vulnerability.view.ts";

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

/** Marks the ones the application already has as seen by this scan (reopening resolved ones); returns their fingerprints. */
async function markSeen(tx: Tx, scan: Scan, fingerprints: readonly string[], now: Date): Promise<{ fingerprint: string; previous: string }[]> {
  return tx.$queryRaw<{ fingerprint: string; previous: string }[]>`
    WITH known AS (
      SELECT id, status FROM vulnerabilities
       WHERE application_id = ${scan.applicationId}::uuid AND fingerprint = ANY(${fingerprints}::text[])
       FOR UPDATE
    )
    UPDATE vulnerabilities v
       SET last_seen_scan_id = ${scan.id}::uuid,
           status = CASE WHEN known.status = 'resolved' THEN 'open' ELSE v.status END,
           resolved_at = CASE WHEN known.status = 'resolved' THEN NULL ELSE v.resolved_at END,
           updated_at = CASE WHEN known.status = 'resolved' THEN ${now} ELSE v.updated_at END
      FROM known
     WHERE v.id = known.id
    RETURNING v.fingerprint, known.status::text AS previous`;
}

/** Inserts the new ones; ON CONFLICT: one another transaction created meanwhile is simply not new here. Returns the ids inserted. */
async function insertNew(tx: Tx, scan: Scan, findings: readonly (Finding & { id: string })[], now: Date): Promise<Set<string>> {
  const column = <K extends keyof (Finding & { id: string })>(key: K) => findings.map((f) => f[key]);
  const rows = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO vulnerabilities (id, application_id, scan_id, scan_type, fingerprint, title, description, severity, cwe, cve,
                                 cvss_score, status, introduced_in, remediation, package_name, package_version, location, tool,
                                 last_seen_scan_id, created_at, updated_at)
    SELECT f.id, ${scan.applicationId}::uuid, ${scan.id}::uuid, ${scan.scanType}::"ScanType", f.fingerprint, f.title, f.description,
           f.severity::"Severity", f.cwe, f.cve, f.cvss_score, 'open', f.introduced_in, f.remediation, f.package_name,
           f.package_version, f.location, ${scan.sourceTool}, ${scan.id}::uuid, ${now}, ${now}
      FROM unnest(${column("id")}::uuid[], ${column("fingerprint")}::text[], ${column("title")}::text[], ${column("description")}::text[],
                  ${column("severity")}::text[], ${column("cwe")}::text[], ${column("cve")}::text[], ${column("cvssScore")}::float8[],
                  ${column("introducedIn")}::text[], ${column("remediation")}::text[], ${column("packageName")}::text[],
                  ${column("packageVersion")}::text[], ${column("location")}::text[])
        AS f(id, fingerprint, title, description, severity, cwe, cve, cvss_score, introduced_in, remediation, package_name, package_version, location)
    ON CONFLICT (application_id, fingerprint) DO NOTHING
    RETURNING id::text`;
  return new Set(rows.map((r) => r.id));
}

/** Resolves the open or in-progress ones of the scan's type and tool it no longer reports. */
async function resolveUnreported(tx: Tx, scan: Scan, fingerprints: readonly string[], now: Date) {
  return tx.$queryRaw<{ id: string; severity: Finding["severity"]; title: string; created_at: Date }[]>`
    UPDATE vulnerabilities
       SET status = 'resolved', resolved_at = ${now}, updated_at = ${now}
     WHERE application_id = ${scan.applicationId}::uuid AND scan_type::text = ${scan.scanType} AND tool = ${scan.sourceTool}
       AND status IN ('open', 'in_progress') AND NOT (fingerprint = ANY(${fingerprints}::text[]))
    RETURNING id::text, severity::text, title, created_at`;
}

/** One chunk of distinct findings: the known ones marked seen, the others inserted with their events. */
async function recordChunk(tx: Tx, scan: Scan, findings: readonly Finding[], now: Date) {
  const { applicationId } = scan;
  const known = new Set<string>();
  let reopened = 0;
  for (const row of await markSeen(tx, scan, findings.map((f) => f.fingerprint), now)) {
    known.add(row.fingerprint);
    if (row.previous === "resolved") reopened++;
  }
  const fresh = findings.filter((f) => !known.has(f.fingerprint)).map((f) => ({ ...f, id: newId() }));
  const inserted = fresh.length > 0 ? await insertNew(tx, scan, fresh, now) : new Set<string>();
  await recordEvents(
    tx,
    fresh
      .filter((f) => inserted.has(f.id))
      .map((f) => ({
        type: "vulnerability.created",
        data: toVulnerabilityCreatedData({ id: f.id, severity: f.severity, applicationId, title: f.title, createdAt: now }),
        applicationId,
        occurredAt: now,
      })),
  );
  return { created: inserted.size, seenAgain: known.size, reopened };
}

/**
 * Dedup by fingerprint per application: a new finding creates an `open` vulnerability
 * (vulnerability.created); one seen again only moves last_seen_scan_id, and goes back to `open`
 * when it was `resolved` (no event: it is the same vulnerability, not a new one); an `open` or
 * `in_progress` one of the scan's type and tool that this scan did not report is `resolved`
 * (vulnerability.resolved); `accepted` stays `accepted`.
 */
export async function recordFindings(tx: Tx, scan: Scan, batches: FindingBatches): Promise<FindingsOutcome> {
  const now = new Date();
  const reported = new Set<string>();
  const summary = summarize([]);
  let created = 0;
  let seenAgain = 0;
  let reopened = 0;
  for await (const batch of batches) {
    const distinct = batch.filter((f) => !reported.has(f.fingerprint) && reported.add(f.fingerprint));
    for (const { severity } of distinct) summary[severity] += 1;
    for (const chunk of chunksOf(distinct, CHUNK)) {
      const outcome = await recordChunk(tx, scan, chunk, now);
      created += outcome.created;
      seenAgain += outcome.seenAgain;
      reopened += outcome.reopened;
    }
  }

  const { applicationId } = scan;
  const resolved = await resolveUnreported(tx, scan, [...reported], now);
  for (const chunk of chunksOf(resolved, CHUNK)) {
    await recordEvents(
      tx,
      chunk.map((v) => ({
        type: "vulnerability.resolved",
        data: toVulnerabilityResolvedData({ id: v.id, severity: v.severity, applicationId, title: v.title, createdAt: v.created_at, status: "resolved" }),
        applicationId,
        occurredAt: now,
      })),
    );
  }

  return { created, seenAgain, reopened, resolved: resolved.length, summary: { ...summary, totalFindings: reported.size } };
}
