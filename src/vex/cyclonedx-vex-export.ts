// The decisions in force on an application's vulnerabilities as a CycloneDX 1.6 VEX (CONTRACT
// §13): the application as the BOM's subject, each package URL a component, and each
// vulnerability its analysis and the component it affects.
import type { Analysis } from "../domain/vulnerabilities/analysis.ts";
import { productKey } from "../domain/vulnerabilities/package-match.ts";
import type { DecidedVulnerability } from "../domain/vulnerabilities/vex.service.ts";
import { newId } from "../ids.ts";
import { asCycloneDxJustification } from "./justifications.ts";
import type { ExportHeader } from "./openvex-export.ts";

export const CYCLONEDX_VEX_VERSION = "1.6";
export const CYCLONEDX_MEDIA_TYPE = `application/vnd.cyclonedx+json; version=${CYCLONEDX_VEX_VERSION}`;

/** Where an id is published, for the ones whose source is evident from their spelling. */
function sourceOf(id: string): { name?: string; url?: string } {
  if (id.startsWith("CVE-")) return { name: "NVD", url: `https://nvd.nist.gov/vuln/detail/${id}` };
  if (id.startsWith("GHSA-")) return { name: "GitHub", url: `https://github.com/advisories/${id}` };
  return {};
}

function analysisOf(analysis: Analysis): Record<string, unknown> {
  return {
    state: analysis.state,
    ...(analysis.justification && { justification: asCycloneDxJustification(analysis.justification) }),
    ...(analysis.response.length > 0 && { response: analysis.response }),
    ...(analysis.detail && { detail: analysis.detail }),
    lastUpdated: analysis.at,
  };
}

export function toCycloneDxVex(
  header: ExportHeader,
  vulnerabilities: readonly DecidedVulnerability[],
): Record<string, unknown> {
  const components = new Map<string, Record<string, unknown>>();
  const entries = new Map<string, Record<string, unknown>>();
  for (const v of vulnerabilities) {
    if (v.aliases.length === 0) continue;
    const [id, ...aliases] = v.aliases;
    const purl = v.location && productKey(v.location) ? v.location : null;
    if (purl && !components.has(purl)) {
      components.set(purl, {
        type: "library",
        "bom-ref": purl,
        name: v.packageName ?? purl,
        ...(v.packageVersion && { version: v.packageVersion }),
        purl,
      });
    }
    const entry = {
      id,
      ...(id && Object.keys(sourceOf(id)).length > 0 && { source: sourceOf(id) }),
      ...(aliases.length > 0 && { references: aliases.map((alias) => ({ id: alias, source: sourceOf(alias) })) }),
      analysis: analysisOf(v.analysis as unknown as Analysis),
      // Without a package the decision is about the application as a whole.
      ...(purl && { affects: [{ ref: purl }] }),
    };
    entries.set(JSON.stringify(entry), entry);
  }
  return {
    bomFormat: "CycloneDX",
    specVersion: CYCLONEDX_VEX_VERSION,
    serialNumber: `urn:uuid:${newId()}`,
    version: 1,
    metadata: {
      timestamp: header.at.toISOString(),
      tools: { components: [{ type: "application", name: header.tool.name, version: header.tool.version }] },
      component: {
        type: "application",
        "bom-ref": `application:${header.application.id}`,
        name: header.application.name,
      },
    },
    components: [...components.values()],
    vulnerabilities: [...entries.values()].map((entry, i) => ({ "bom-ref": `vulnerability-${i + 1}`, ...entry })),
  };
}
