// A triage decision as a one-statement OpenVEX 0.2.0 document (https://github.com/openvex/spec),
// written so that the statement decides exactly the vulnerability it was made for: it names the
// vulnerability by an id the service matches (its CVE, else its first alias) and, when its location
// is a package URL, names that package as the product, so the same CVE in another package is left alone.

export const JUSTIFICATIONS = [
  "component_not_present",
  "vulnerable_code_not_present",
  "vulnerable_code_not_in_execute_path",
  "vulnerable_code_cannot_be_controlled_by_adversary",
  "inline_mitigations_already_exist",
] as const;
export type Justification = (typeof JUSTIFICATIONS)[number];

export type TriageDecision =
  | { status: "not_affected"; justification: Justification; detail: string }
  | { status: "under_investigation"; detail: string }
  | { status: "affected"; detail: string };

export interface TriagedVulnerability {
  cve: string | null;
  aliases: readonly string[];
  location: string | null;
}

/** The id a statement names the vulnerability by; null when it has none (nothing can match it). */
export const vexName = (v: TriagedVulnerability): string | null => v.cve ?? v.aliases[0] ?? null;

/** The statement's texts in the fields OpenVEX gives each status (affected requires an action statement). */
function texts(decision: TriageDecision): Record<string, string> {
  const detail = decision.detail.trim();
  switch (decision.status) {
    case "not_affected":
      return { justification: decision.justification, ...(detail && { impact_statement: detail }) };
    case "under_investigation":
      return detail ? { status_notes: detail } : {};
    case "affected":
      return { action_statement: detail || "Reopened from the console: to be remediated." };
  }
}

/** A random (version 4) UUID; crypto.randomUUID exists only in secure contexts, getRandomValues everywhere. */
function uuid(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function triageDocument(v: TriagedVulnerability, decision: TriageDecision, author: string) {
  const name = vexName(v);
  if (!name) throw new Error("The vulnerability has no id a VEX statement can name");
  const now = new Date().toISOString();
  return {
    "@context": "https://openvex.dev/ns/v0.2.0",
    "@id": `urn:uuid:${uuid()}`,
    author,
    timestamp: now,
    version: 1,
    tooling: "AppSec console",
    statements: [
      {
        vulnerability: { name },
        ...(v.location?.startsWith("pkg:") && { products: [{ "@id": v.location }] }),
        status: decision.status,
        timestamp: now,
        ...texts(decision),
      },
    ],
  };
}
