// What a completed scan's findings do to the application's vulnerabilities (CONTRACT §5). Runs
// inside the scan's completing transaction, which also carries the events it records. A report
// may hold 100,000 findings: every statement takes them as array parameters (one bind parameter
// per column, whatever the count), in chunks, rather than through the ORM's row-by-row encoding.
import type { Tx } from "../../db/client.ts";
import { recordEvents } from "../../events/outbox.ts";
import type { Scan } from "../../generated/prisma/client.ts";
import { newId } from "../../ids.ts";
import { chunksOf } from "../chunks.ts";
import type { Finding } from "./finding.ts";
import { toVulnerabilityCreatedData, toVulnerabilityResolvedData } from "./vulnerability.view.ts";

/** Rows per statement: large enough to amortise the round trip, small enough to bound memory. */
const CHUNK = 5_000;

export interface FindingsOutcome {
  created: number;
  seenAgain: number;
  reopened: number;
  resolved: number;
}

/** Same fingerprint reported twice by one scan counts once. */
export function uniqueFindings<F extends { fingerprint: string }>(findings: readonly F[]): F[] {
  const byFingerprint = new Map<string, F>();
  for (const f of findings) if (!byFingerprint.has(f.fingerprint)) byFingerprint.set(f.fingerprint, f);
  return [...byFingerprint.values()];
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

/**
 * Dedup by fingerprint per application: a new finding creates an `open` vulnerability
 * (vulnerability.created); one seen again only moves last_seen_scan_id, and goes back to `open`
 * when it was `resolved` (no event: it is the same vulnerability, not a new one); an `open` or
 * `in_progress` one of the scan's type and tool that this scan did not report is `resolved`
 * (vulnerability.resolved); `accepted` stays `accepted`.
 */
export async function recordFindings(tx: Tx, scan: Scan, reported: readonly Finding[]): Promise<FindingsOutcome> {
  const findings = uniqueFindings(reported);
  const fingerprints = findings.map((f) => f.fingerprint);
  const now = new Date();
  const { applicationId } = scan;

  const known = new Set<string>();
  let reopened = 0;
  for (const chunk of chunksOf(fingerprints, CHUNK)) {
    for (const row of await markSeen(tx, scan, chunk, now)) {
      known.add(row.fingerprint);
      if (row.previous === "resolved") reopened++;
    }
  }

  let created = 0;
  const fresh = findings.filter((f) => !known.has(f.fingerprint)).map((f) => ({ ...f, id: newId() }));
  for (const chunk of chunksOf(fresh, CHUNK)) {
    const inserted = await insertNew(tx, scan, chunk, now);
    created += inserted.size;
    await recordEvents(
      tx,
      chunk
        .filter((f) => inserted.has(f.id))
        .map((f) => ({
          type: "vulnerability.created",
          data: toVulnerabilityCreatedData({ id: f.id, severity: f.severity, applicationId, title: f.title, createdAt: now }),
          applicationId,
          occurredAt: now,
        })),
    );
  }

  const resolved = await resolveUnreported(tx, scan, fingerprints, now);
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

  return { created, seenAgain: known.size, reopened, resolved: resolved.length };
}
