// Grype's JSON report (`grype <target> -o json`) → findings (docs/spec/CONTRACT.md §11). Grype publishes no
// JSON Schema for it; the shape is that of its documentation and of its own types (anchore/grype
// grype/presenter/models/document.go: Document).
//
// How a Grype report says what Grype did:
// - "The tool failed": it does not. Grype builds the document only once matching succeeded (any
//   error before, a source it cannot read, a database it cannot load, ends the run without one),
//   so what reaches us is no document, or a cut-off one: a 400, never a scan.
// - "This part was not scanned": nothing in it says so; a report is about one source (`source`),
//   all of it.
// - "Nothing found": `matches: []`. Grype always writes the array ("we must preallocate the
//   findings to ensure the JSON document does not show null when no matches are found"), so a
//   document without it, or with null, is not a Grype report: a 400.
// So a report resolves its tool's earlier findings it no longer lists. (`ignoredMatches`, the
// matches its configuration ignores, are not read: they resolve as if not found.)
import { z } from "zod";
import type { Severity } from "../../domain/validation.ts";
import { WHOLE_SCOPE, type Finding } from "../../domain/vulnerabilities/finding.ts";
import { canonicalIds } from "../../domain/vulnerabilities/vulnerability-ids.ts";
import {
  clip,
  cveOf,
  cvssScoreFor,
  fingerprintOf,
  packageCoordinate,
  TEXT_MAX,
  titleOf,
  UNKNOWN_CWE,
} from "./finding-rules.ts";
import { fromPurl, packageLocation, type PackageRef } from "./package-ref.ts";
import { checkShape } from "./shape-check.ts";
import { isObject, type ReportParser } from "./report.ts";

const cvss = z.array(z.looseObject({ version: z.string(), metrics: z.looseObject({ baseScore: z.number() }) }));

const advisory = z.looseObject({
  id: z.string().min(1),
  description: z.string().optional(),
  cvss: cvss.nullish(),
});

const match = z.looseObject({
  vulnerability: advisory.extend({
    severity: z.enum(["Critical", "High", "Medium", "Low", "Negligible", "Unknown"]),
    fix: z.looseObject({ versions: z.array(z.string()).nullish(), state: z.string().optional() }).optional(),
    urls: z.array(z.string()).nullish(),
  }),
  relatedVulnerabilities: z.array(advisory).nullish(),
  artifact: z.looseObject({
    name: z.string().min(1),
    version: z.string().optional(),
    type: z.string().optional(),
    purl: z.string().optional(),
  }),
});

const grypeSchema = z.looseObject({
  matches: z.array(match),
  source: z.looseObject({ type: z.string(), target: z.unknown() }).optional(),
  descriptor: z.looseObject({ name: z.string().optional(), version: z.string().optional() }).optional(),
});

type Match = z.infer<typeof match>;

const SEVERITY: Record<Match["vulnerability"]["severity"], Severity | null> = {
  Critical: "critical",
  High: "high",
  Medium: "medium",
  Low: "low",
  Unknown: "low",
  Negligible: null,
};

/** What was scanned, as the user named it: an image reference, a directory, a file. */
function targetOf(source: z.infer<typeof grypeSchema>["source"]): string {
  const target = source?.target;
  if (typeof target === "string") return target;
  if (isObject(target) && typeof target["userInput"] === "string") return target["userInput"];
  return "";
}

const v3Score = (advisories: readonly z.infer<typeof advisory>[]): number | null =>
  advisories.flatMap((a) => a.cvss ?? []).find((c) => c.version.startsWith("3"))?.metrics.baseScore ?? null;

function findingOf(m: Match, tool: string, target: string): Finding | null {
  const v = m.vulnerability;
  const related = m.relatedVulnerabilities ?? [];
  const aliases = canonicalIds([v.id, ...related.map((r) => r.id)]);
  const cve = cveOf(aliases);
  // Negligible is informational: kept, as low, only when it names a CVE.
  const severity = SEVERITY[v.severity] ?? (cve ? "low" : null);
  if (!severity) return null;
  const a = m.artifact;
  const pkg: PackageRef = (a.purl && fromPurl(a.purl)) || { name: a.name, version: a.version ?? null, purl: null };
  const coordinate = packageCoordinate(a.name, a.version);
  const fixes = v.fix?.versions ?? [];
  return {
    fingerprint: fingerprintOf("grype", tool, [v.id, packageLocation(pkg), target]),
    title: titleOf(`${v.id} in ${coordinate}`),
    description: clip(v.description ?? related.find((r) => r.description)?.description ?? v.id, TEXT_MAX),
    severity,
    cwe: UNKNOWN_CWE,
    cve,
    cvssScore: cvssScoreFor(severity, v3Score([v, ...related])),
    introducedIn: coordinate,
    remediation:
      fixes.length > 0 ? `Upgrade ${a.name} to ${fixes.join(" or ")}` : `No fixed version of ${a.name} is known yet`,
    packageName: a.name,
    packageVersion: a.version ?? null,
    location: packageLocation(pkg),
    aliases,
  };
}

export const grypeReport: ReportParser = {
  format: "grype",

  detect: (document) =>
    isObject(document) &&
    Array.isArray(document["matches"]) &&
    (isObject(document["descriptor"]) || isObject(document["source"])),

  parse(document) {
    const report = checkShape(grypeSchema, document, "Grype JSON report");
    const tool = report.descriptor?.name === "grype" || !report.descriptor?.name ? "Grype" : report.descriptor.name;
    const target = targetOf(report.source);
    return {
      format: "grype",
      tool,
      toolVersion: report.descriptor?.version ?? null,
      scanType: report.source?.type === "image" ? "container" : "sca",
      findings: report.matches.flatMap((m) => findingOf(m, tool, target) ?? []),
      failure: null,
      coverage: WHOLE_SCOPE,
    };
  },
};
