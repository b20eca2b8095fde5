// Documents the VEX tests send, written to their specifications: a CycloneDX 1.6 report as a
// dependency scanner writes one (components with package URLs, vulnerabilities with references,
// ratings and affects), OpenVEX 0.2.0 documents, and CycloneDX VEX.
import { randomUUID } from "node:crypto";

export interface ScannedVulnerability {
  id: string;
  /** Other ids of the same vulnerability (CycloneDX `references`). */
  aliases?: string[];
  /** Package URL of the affected component. */
  purl: string;
  severity?: "critical" | "high" | "medium" | "low";
  /** The scanner's own analysis (a VEX-aware scanner writes it into its report). */
  analysis?: Record<string, unknown>;
}

const nameOf = (purl: string) => decodeURIComponent(purl.replace(/^pkg:[^/]+\//, "").replace(/[@?#].*$/, ""));
const versionOf = (purl: string) => /@([^?#]+)/.exec(purl.slice(4))?.[1];

/** A CycloneDX 1.6 BOM with a `vulnerabilities` array, as Trivy, Grype or cdxgen write one. */
export function cyclonedxReport(vulnerabilities: ScannedVulnerability[], tool = "grype"): Record<string, unknown> {
  const purls = [...new Set(vulnerabilities.map((v) => v.purl))];
  return {
    bomFormat: "CycloneDX",
    specVersion: "1.6",
    serialNumber: `urn:uuid:${randomUUID()}`,
    version: 1,
    metadata: {
      timestamp: "2026-11-25T09:00:00Z",
      tools: { components: [{ type: "application", name: tool, version: "0.80.0" }] },
      component: { type: "application", "bom-ref": "subject", name: "payments-api", version: "3.2.0" },
    },
    components: purls.map((purl, i) => ({
      type: "library",
      "bom-ref": `component-${i}`,
      name: nameOf(purl),
      version: versionOf(purl),
      purl,
    })),
    vulnerabilities: vulnerabilities.map((v, i) => ({
      "bom-ref": `vulnerability-${i}`,
      id: v.id,
      source: { name: v.id.startsWith("GHSA-") ? "GitHub" : "NVD" },
      ...(v.aliases && {
        references: v.aliases.map((id) => ({ id, source: { name: id.startsWith("GHSA-") ? "GitHub" : "NVD" } })),
      }),
      ratings: [
        {
          source: { name: "NVD" },
          severity: v.severity ?? "high",
          method: "CVSSv31",
          score: { critical: 9.8, high: 7.5, medium: 5.3, low: 2.1 }[v.severity ?? "high"],
        },
      ],
      description: `${v.id} in ${nameOf(v.purl)}`,
      affects: [{ ref: `component-${purls.indexOf(v.purl)}` }],
      ...(v.analysis && { analysis: v.analysis }),
    })),
  };
}

export type OpenVexStatement = Record<string, unknown>;

/** An OpenVEX 0.2.0 document with the given statements. */
export function openVex(statements: OpenVexStatement[], timestamp = "2026-11-25T10:00:00Z"): Record<string, unknown> {
  return {
    "@context": "https://openvex.dev/ns/v0.2.0",
    "@id": `https://vex.example.com/payments-api/${randomUUID()}`,
    author: "Payments security team <security@example.com>",
    role: "Document Creator",
    timestamp,
    version: 1,
    tooling: "hand-written for the tests",
    statements,
  };
}

/** The statement fields each OpenVEX status needs (not_affected: a justification; affected: an action statement). */
export const OPENVEX_STATUS_FIELDS: Record<string, Record<string, unknown>> = {
  not_affected: {
    justification: "vulnerable_code_not_in_execute_path",
    impact_statement: "The vulnerable parser is never given user input.",
  },
  affected: { action_statement: "Upgrade to the fixed release before the next deploy." },
  fixed: { status_notes: "Patched in our fork." },
  under_investigation: {},
};

export function statement(name: string, status: string, extra: OpenVexStatement = {}): OpenVexStatement {
  return { vulnerability: { name }, status, ...OPENVEX_STATUS_FIELDS[status], ...extra };
}

/** A CycloneDX VEX: a BOM whose vulnerabilities carry analysis, affecting components by bom-ref. */
export function cyclonedxVex(
  entries: { id: string; purl?: string; analysis: Record<string, unknown>; aliases?: string[] }[],
  specVersion: "1.4" | "1.5" | "1.6" = "1.6",
): Record<string, unknown> {
  const purls = [...new Set(entries.flatMap((e) => (e.purl ? [e.purl] : [])))];
  return {
    bomFormat: "CycloneDX",
    specVersion,
    version: 1,
    metadata: {
      timestamp: "2026-11-25T10:00:00Z",
      component: { type: "application", "bom-ref": "product", name: "payments-api" },
    },
    components: purls.map((purl) => ({
      type: "library",
      "bom-ref": purl,
      name: nameOf(purl),
      version: versionOf(purl),
      purl,
    })),
    vulnerabilities: entries.map((e) => ({
      id: e.id,
      ...(e.aliases && { references: e.aliases.map((id) => ({ id, source: { name: "GitHub" } })) }),
      analysis: e.analysis,
      affects: [{ ref: e.purl ?? "product" }],
    })),
  };
}
