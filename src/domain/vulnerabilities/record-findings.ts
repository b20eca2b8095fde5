// What a completed scan's findings do to the application's vulnerabilities (CONTRACT §5). Runs
// inside the scan's completing transaction, which also carries the events it records.
import type { Tx } from "../../db/client.ts";
import { recordEvents } from "../../events/outbox.ts";
import type { Scan } from "../../generated/prisma/client.ts";
import { newId } from "../../ids.ts";
import type { Finding } from "./finding.ts";
import { toVulnerabilityCreatedData, toVulnerabilityResolvedData } from "./vulnerability.view.ts";


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

  const known = await tx.vulnerability.findMany({
    where: { applicationId: scan.applicationId, fingerprint: { in: fingerprints } },
    select: { id: true, fingerprint: true, status: true },
  });
  const knownFingerprints = new Set(known.map((v) => v.fingerprint));

  await tx.vulnerability.updateMany({
    where: { id: { in: known.map((v) => v.id) } },
    data: { lastSeenScanId: scan.id },
  });
  const { count: reopened } = await tx.vulnerability.updateMany({
    where: { id: { in: known.filter((v) => v.status === "resolved").map((v) => v.id) } },
    data: { status: "open", resolvedAt: null, updatedAt: now },
  });

  // skipDuplicates: a finding another transaction created meanwhile is simply not new here.
  const created = await tx.vulnerability.createManyAndReturn({
    data: findings
      .filter((f) => !knownFingerprints.has(f.fingerprint))
      .map((f) => ({
        id: newId(),
        applicationId: scan.applicationId,
        scanId: scan.id,
        scanType: scan.scanType,
        fingerprint: f.fingerprint,
        title: f.title,
        description: f.description,
        severity: f.severity,
        cwe: f.cwe,
        cve: f.cve,
        cvssScore: f.cvssScore,
        status: "open" as const,
        introducedIn: f.introducedIn,
        remediation: f.remediation,
        packageName: f.packageName,
        packageVersion: f.packageVersion,
        location: f.location,
        tool: scan.sourceTool,
        lastSeenScanId: scan.id,
        createdAt: now,
        updatedAt: now,
      })),
    skipDuplicates: true,
  });
  await recordEvents(
    tx,
    created.map((v) => ({ type: "vulnerability.created", data: toVulnerabilityCreatedData(v), applicationId: v.applicationId, occurredAt: now })),
  );

  const resolved = await tx.vulnerability.updateManyAndReturn({
    where: {
      applicationId: scan.applicationId,
      scanType: scan.scanType,
      tool: scan.sourceTool,
      status: { in: ["open", "in_progress"] },
      fingerprint: { notIn: fingerprints },
    },
    data: { status: "resolved", resolvedAt: now, updatedAt: now },
  });
  await recordEvents(
    tx,
    resolved.map((v) => ({ type: "vulnerability.resolved", data: toVulnerabilityResolvedData(v), applicationId: v.applicationId, occurredAt: now })),
  );

  return { created: created.length, seenAgain: known.length, reopened, resolved: resolved.length };
}
