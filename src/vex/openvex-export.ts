// The decisions in force on an application's vulnerabilities as an OpenVEX 0.2.0 document
// (docs/spec/CONTRACT.md §13): one statement per vulnerability, about its package when it has a package URL,
// so that importing it into another application with the same findings gives the same statuses.
import type { Analysis } from "../domain/vulnerabilities/analysis.ts";
import { productKey } from "../domain/vulnerabilities/package-match.ts";
import type { DecidedVulnerability } from "../domain/vulnerabilities/vex.service.ts";
import { newId } from "../ids.ts";
import { asOpenVexJustification } from "./justifications.ts";
import { OPENVEX_CONTEXT, type OpenVexStatus } from "./openvex-document.ts";

const STATUS_OF_STATE: Record<Analysis["state"], OpenVexStatus> = {
  not_affected: "not_affected",
  false_positive: "not_affected",
  in_triage: "under_investigation",
  exploitable: "affected",
  resolved: "fixed",
  resolved_with_pedigree: "fixed",
};

export interface ExportHeader {
  application: { id: string; name: string };
  tool: { name: string; version: string };
  at: Date;
}

function statementOf(v: DecidedVulnerability, analysis: Analysis): Record<string, unknown> {
  const status = STATUS_OF_STATE[analysis.state];
  const [name, ...aliases] = v.aliases;
  const purl = v.location && productKey(v.location) ? v.location : null;
  const texts: Record<string, string> = {};
  if (status === "not_affected") {
    // A not_affected statement needs a justification or an impact statement.
    if (analysis.detail || !analysis.justification)
      texts["impact_statement"] =
        analysis.detail ?? (analysis.state === "false_positive" ? "False positive" : "Not affected");
  } else if (status === "affected") {
    texts["action_statement"] =
      analysis.detail ??
      (analysis.response.length > 0 ? `Response: ${analysis.response.join(", ")}` : "No action was recorded");
  } else if (analysis.detail) {
    texts["status_notes"] = analysis.detail;
  }
  return {
    vulnerability: { name, ...(aliases.length > 0 && { aliases }) },
    ...(purl && { products: [{ "@id": purl }] }),
    status,
    ...(status === "not_affected" &&
      analysis.justification && { justification: asOpenVexJustification(analysis.justification) }),
    ...texts,
    timestamp: analysis.at,
  };
}

export function toOpenVex(
  header: ExportHeader,
  vulnerabilities: readonly DecidedVulnerability[],
): Record<string, unknown> {
  // A vulnerability no report named by an id cannot be the subject of a statement; two findings of
  // one vulnerability in one package (two targets) with one decision are one statement.
  const statements = new Map<string, Record<string, unknown>>();
  for (const v of vulnerabilities) {
    if (v.aliases.length === 0) continue;
    const statement = statementOf(v, v.analysis as unknown as Analysis);
    statements.set(JSON.stringify(statement), statement);
  }
  return {
    "@context": OPENVEX_CONTEXT,
    "@id": `urn:uuid:${newId()}`,
    author: `${header.tool.name} (application ${header.application.name})`,
    timestamp: header.at.toISOString(),
    version: 1,
    tooling: `${header.tool.name} ${header.tool.version}`,
    statements: [...statements.values()],
  };
}
