// CycloneDX 1.4–1.6 JSON with a `vulnerabilities` array (Trivy, Grype, Snyk, OWASP
// dependency-track, cdxgen, …) → findings (docs/spec/CONTRACT.md §11). The BOM is checked against the schema of
// its specVersion, as published in the CycloneDX JavaScript library, before it is read.
//
// How a BOM says what its tool did (CycloneDX 1.4–1.6 JSON, the schemas in
// @cyclonedx/cyclonedx-library's res/schema):
// - "The tool failed": it cannot; no field says an analysis failed. A tool that fails writes no
//   BOM, or a cut-off one: a 400, never a scan.
// - "This part was not scanned": a BOM without `vulnerabilities` is an inventory that no tool
//   analysed for vulnerabilities (what cyclonedx-npm or cdxgen write): it is read, as a scan with
//   no findings, and resolves nothing. `compositions[].aggregate` (complete, incomplete, unknown…)
//   says how complete the inventory's relationships are, not whether they were analysed; not read.
// - "Nothing found": `vulnerabilities: []` ("Vulnerabilities identified in components or
//   services": none). Beware Trivy's CycloneDX output: it writes `"vulnerabilities": []` even when
//   vulnerability scanning was off (pkg/sbom/cyclonedx/marshal.go), and such a BOM reads as clean.
// So a BOM with `vulnerabilities` resolves its tool's earlier findings it no longer lists; one
// without resolves nothing.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import {
  ANALYSIS_RESPONSES,
  ANALYSIS_STATES,
  CYCLONEDX_JUSTIFICATIONS,
  type Decision,
} from "../../domain/vulnerabilities/analysis.ts";
import type { Severity } from "../../domain/validation.ts";
import { canonicalIds } from "../../domain/vulnerabilities/vulnerability-ids.ts";
import { WHOLE_SCOPE, type Finding } from "../../domain/vulnerabilities/finding.ts";
import {
  clip,
  cveOf,
  cvssScoreFor,
  cweOf,
  fingerprintOf,
  packageCoordinate,
  severityOfScore,
  TEXT_MAX,
  titleOf,
} from "./finding-rules.ts";
import { schemaCheckOfLongArrays, type SchemaCheck } from "./json-schema-check.ts";
import { fromPurl, packageLocation, type PackageRef } from "./package-ref.ts";
import { isObject, ReportInvalid, type ReportParser } from "./report.ts";

export const CYCLONEDX_VERSIONS = ["1.4", "1.5", "1.6"] as const;
export type SpecVersion = (typeof CYCLONEDX_VERSIONS)[number];

const SCHEMA_DIR = join(
  dirname(createRequire(import.meta.url).resolve("@cyclonedx/cyclonedx-library/package.json")),
  "res",
  "schema",
);
const readSchema = (file: string) =>
  JSON.parse(readFileSync(join(SCHEMA_DIR, file), "utf8")) as Record<string, unknown>;

const checks = new Map<SpecVersion, SchemaCheck>();
export function bomSchema(version: SpecVersion): SchemaCheck {
  let check = checks.get(version);
  if (!check) {
    // The BOM schemas refer to their neighbours by file name, resolved against their own $id.
    const references = ["spdx.SNAPSHOT.schema.json", "jsf-0.82.SNAPSHOT.schema.json"].map((file) => ({
      ...readSchema(file),
      $id: `http://cyclonedx.org/schema/${file}`,
    }));
    check = schemaCheckOfLongArrays(
      readSchema(`bom-${version}.SNAPSHOT.schema.json`),
      ["components", "vulnerabilities"],
      { references },
    );
    checks.set(version, check);
  }
  return check;
}

export interface Component {
  "bom-ref"?: string;
  type?: string;
  name: string;
  version?: string;
  group?: string;
  purl?: string;
  components?: Component[];
}

interface Rating {
  score?: number;
  severity?: string;
  method?: string;
}

interface Vulnerability {
  id?: string;
  references?: { id: string }[];
  ratings?: Rating[];
  cwes?: number[];
  description?: string;
  detail?: string;
  recommendation?: string;
  workaround?: string;
  analysis?: CycloneDxAnalysis;
  affects?: { ref: string }[];
  tools?: Tools;
}

interface Tool {
  type?: string;
  name?: string;
  version?: string;
}

type Tools = Tool[] | { components?: Tool[]; services?: Tool[] };

interface Bom {
  specVersion: string;
  metadata?: { tools?: Tools; component?: Component };
  components?: Component[];
  vulnerabilities?: Vulnerability[];
}

/** A vulnerability's `analysis`, as the schema allows it. */
export interface CycloneDxAnalysis {
  state?: string;
  justification?: string;
  response?: string[];
  detail?: string;
}

const isOneOf = <T extends string>(values: readonly T[], value: unknown): value is T =>
  (values as readonly unknown[]).includes(value);

/** An analysis with a state as the decision it records (the schema has checked its enums). */
export function decisionOfAnalysis(analysis: CycloneDxAnalysis & { state: string }): Decision {
  return {
    state: isOneOf(ANALYSIS_STATES, analysis.state) ? analysis.state : "in_triage",
    justification: isOneOf(CYCLONEDX_JUSTIFICATIONS, analysis.justification) ? analysis.justification : null,
    detail: analysis.detail?.trim() ? clip(analysis.detail, TEXT_MAX) : null,
    response: [...new Set((analysis.response ?? []).filter((r) => isOneOf(ANALYSIS_RESPONSES, r)))],
  };
}

const SEVERITY_RANK: Record<string, number> = { critical: 4, high: 3, medium: 2, low: 1, unknown: 1, info: 0, none: 0 };
const RANKED: Severity[] = ["low", "low", "medium", "high", "critical"];

const listed = (tools: Tools | undefined): Tool[] =>
  Array.isArray(tools) ? tools : [...(tools?.components ?? []), ...(tools?.services ?? [])];

/** The tool that found the vulnerabilities (1.5+ names it on each), else the BOM's first tool that is not a library. */
function toolOf(bom: Bom): Tool {
  const candidates = [
    ...(bom.vulnerabilities ?? []).flatMap((v) => listed(v.tools)),
    ...listed(bom.metadata?.tools),
  ].filter((t) => t.name);
  return candidates.find((t) => t.type !== "library") ?? candidates[0] ?? {};
}

/** Every component by its bom-ref, nested ones included (walked with a stack, not recursion). */
export function componentsByRef(bom: Pick<Bom, "metadata" | "components">): Map<string, Component> {
  const byRef = new Map<string, Component>();
  const stack = [...(bom.metadata?.component ? [bom.metadata.component] : []), ...(bom.components ?? [])];
  while (stack.length > 0) {
    const component = stack.pop()!;
    if (component["bom-ref"]) byRef.set(component["bom-ref"], component);
    stack.push(...(component.components ?? []));
  }
  return byRef;
}

function packageOf(component: Component): PackageRef {
  const fromUrl = component.purl ? fromPurl(component.purl) : null;
  if (fromUrl) return fromUrl;
  return {
    name: component.group ? `${component.group}/${component.name}` : component.name,
    version: component.version ?? null,
    purl: null,
  };
}

/** The highest of the ratings; `unknown` counts as low, `info`/`none` as nothing (null). */
function severityOf(ratings: readonly Rating[]): { severity: Severity | null; score: number | null } {
  let rank = ratings.length === 0 ? 1 : 0;
  for (const rating of ratings) {
    const fromScore = rating.score !== undefined ? severityOfScore(rating.score) : null;
    const named = rating.severity !== undefined ? SEVERITY_RANK[rating.severity] : undefined;
    rank = Math.max(rank, named ?? (fromScore ? SEVERITY_RANK[fromScore]! : 1));
  }
  // Sources may score differently: the highest CVSS v3 score goes with the highest rating.
  const cvss3 = ratings.flatMap((r) =>
    (r.method === "CVSSv31" || r.method === "CVSSv3") && r.score !== undefined ? [r.score] : [],
  );
  return { severity: rank === 0 ? null : RANKED[rank]!, score: cvss3.length > 0 ? Math.max(...cvss3) : null };
}

export const cyclonedxReport: ReportParser = {
  format: "cyclonedx",

  detect: (document) => isObject(document) && document["bomFormat"] === "CycloneDX",

  parse(document) {
    const version = isObject(document) ? document["specVersion"] : undefined;
    if (!CYCLONEDX_VERSIONS.includes(version as SpecVersion)) {
      throw new ReportInvalid("The report is not a CycloneDX BOM of a supported version", [
        { path: "/specVersion", message: `Must be one of ${CYCLONEDX_VERSIONS.join(", ")}` },
      ]);
    }
    const errors = bomSchema(version as SpecVersion)(document);
    if (errors.length > 0) throw new ReportInvalid(`The report is not a valid CycloneDX ${version} BOM`, errors);
    const bom = document as Bom;
    const tool = toolOf(bom);
    const toolName = tool.name ?? "CycloneDX";
    const subject = bom.metadata?.component;
    const target = subject ? packageCoordinate(subject.name, subject.version) : "";
    const components = componentsByRef(bom);

    const findings = (bom.vulnerabilities ?? []).flatMap((vulnerability): Finding[] => {
      const id = vulnerability.id ?? "";
      const aliases = canonicalIds([id, ...(vulnerability.references ?? []).map((r) => r.id)]);
      const cve = cveOf(aliases);
      const state = vulnerability.analysis?.state;
      // Its analysis gives its status (docs/spec/CONTRACT.md §13): a not_affected finding is kept, `accepted`.
      const analysis = state ? decisionOfAnalysis({ ...vulnerability.analysis, state }) : null;
      const rated = severityOf(vulnerability.ratings ?? []);
      // Informational (info/none) is kept, as low, only when it names a CVE.
      const severity = rated.severity ?? (cve ? "low" : null);
      if (!severity) return [];
      const affected = (vulnerability.affects ?? []).map((a) => {
        const component = components.get(a.ref);
        return component ? packageOf(component) : (fromPurl(a.ref) ?? { name: a.ref, version: null, purl: null });
      });
      const text = vulnerability.detail ?? vulnerability.description ?? id;
      return (affected.length > 0 ? affected : [null]).map((pkg) => ({
        fingerprint: fingerprintOf("cyclonedx", toolName, [id, pkg ? packageLocation(pkg) : "", target]),
        title: titleOf(pkg ? `${id} in ${packageCoordinate(pkg.name, pkg.version)}` : id) || "Untitled vulnerability",
        description: clip(text, TEXT_MAX),
        severity,
        cwe: cweOf(vulnerability.cwes ?? []),
        cve,
        cvssScore: cvssScoreFor(severity, rated.score),
        introducedIn: pkg ? packageCoordinate(pkg.name, pkg.version) : target || id,
        remediation: clip(
          vulnerability.recommendation ??
            vulnerability.workaround ??
            (pkg ? `Upgrade ${pkg.name} to a version not affected by ${id}` : `See ${id}`),
          TEXT_MAX,
        ),
        packageName: pkg?.name ?? null,
        packageVersion: pkg?.version ?? null,
        location: pkg ? packageLocation(pkg) : target || null,
        aliases,
        analysis,
      }));
    });
    return {
      format: "cyclonedx",
      tool: toolName,
      toolVersion: tool.version ?? null,
      scanType: subject?.type === "container" ? "container" : "sca",
      findings,
      failure: null,
      // Without `vulnerabilities`, nothing was analysed: no part covered.
      coverage: bom.vulnerabilities === undefined ? { parts: [], partFailed: false } : WHOLE_SCOPE,
    };
  },
};
