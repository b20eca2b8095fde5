// Trivy's JSON report (`trivy image|fs|repo --format json`, SchemaVersion 2) → findings
// (docs/spec/CONTRACT.md §11). Trivy publishes no JSON Schema; the shape is that of its documentation and of
// its own types (aquasecurity/trivy pkg/types/report.go: Report, Result, ResultClass).
//
// How a Trivy report says what Trivy did:
// - "The tool failed": it does not. Trivy writes the report only once the scan succeeded; a
//   failed scan (an image it cannot pull, a vulnerability database it cannot load, a detection
//   error: pkg/scan/ospkg, pkg/scan/langpkg return the error) exits non-zero with no report, so
//   what reaches us is no document, or a cut-off one: a 400, never a scan.
// - "This part was not scanned": a target that is not in `Results`. `Results` lists each target
//   Trivy scanned (the OS packages of an image, each lock file or manifest: `Target`, with its
//   `Class`) and is left out when there is none (`omitempty`): such a report scanned nothing.
//   Results of other classes (config, secret, license, license-file, custom) are not about
//   vulnerabilities. Trivy 0.52 and later keep a target without vulnerabilities in `Results`
//   (trivy#6765); before (trivy#6579 changed it), a lock file with none was left out, so with
//   those versions a lock file whose findings were all fixed is "not scanned" and they stay open.
// - "Nothing found": a vulnerability target listed with no `Vulnerabilities` (null, [] or absent).
// So a report resolves only the findings of the targets it lists. The OS target's name carries the
// image's name and tag ("app:1.4 (alpine 3.20.3)"), which change with every build: its part is the
// image's OS packages, whatever the tag.
import { z } from "zod";
import type { Severity } from "../../domain/validation.ts";
import type { Finding } from "../../domain/vulnerabilities/finding.ts";
import { canonicalIds } from "../../domain/vulnerabilities/vulnerability-ids.ts";
import {
  clip,
  cveOf,
  cvssScoreFor,
  cweOf,
  fingerprintOf,
  packageCoordinate,
  TEXT_MAX,
  titleOf,
} from "./finding-rules.ts";
import { fromPurl, packageLocation, type PackageRef } from "./package-ref.ts";
import { checkShape } from "./shape-check.ts";
import { isObject, type ReportParser } from "./report.ts";

const cvssSource = z.looseObject({ V3Score: z.number().optional() });

const vulnerability = z.looseObject({
  VulnerabilityID: z.string().min(1),
  VendorIDs: z.array(z.string()).optional(),
  PkgName: z.string().min(1),
  PkgIdentifier: z.looseObject({ PURL: z.string().optional() }).optional(),
  InstalledVersion: z.string().optional(),
  FixedVersion: z.string().optional(),
  Status: z.string().optional(),
  SeveritySource: z.string().optional(),
  Severity: z.enum(["UNKNOWN", "LOW", "MEDIUM", "HIGH", "CRITICAL"]),
  Title: z.string().optional(),
  Description: z.string().optional(),
  PrimaryURL: z.string().optional(),
  CweIDs: z.array(z.string()).optional(),
  CVSS: z.record(z.string(), cvssSource).optional(),
});

const trivySchema = z.looseObject({
  SchemaVersion: z.literal(2),
  ArtifactName: z.string().optional(),
  ArtifactType: z.string().optional(),
  Trivy: z.looseObject({ Version: z.string().optional() }).optional(),
  Results: z
    .array(
      z.looseObject({
        Target: z.string(),
        Class: z.string().optional(),
        Type: z.string().optional(),
        Vulnerabilities: z.array(vulnerability).nullish(),
      }),
    )
    .nullish(),
});

type TrivyResult = NonNullable<z.infer<typeof trivySchema>["Results"]>[number];

/** Classes of results that are not about vulnerabilities (Trivy's ResultClass). */
const OTHER_CLASSES = new Set(["config", "secret", "license", "license-file", "custom"]);

/** The part of Trivy's scan a result is, or null when it is not about vulnerabilities (its class says so). */
function partOf(result: TrivyResult): string | null {
  if (result.Class === "os-pkgs") return "os-pkgs";
  return result.Class !== undefined && OTHER_CLASSES.has(result.Class) ? null : `target:${result.Target}`;
}

type TrivyVulnerability = z.infer<typeof vulnerability>;

/** The vendor's v3 score Trivy chose the severity from, else NVD's, else any. */
function v3Score(v: TrivyVulnerability): number | null {
  const sources = v.CVSS ?? {};
  const preferred = [v.SeveritySource, "nvd"].flatMap((s) =>
    s && sources[s]?.V3Score !== undefined ? [sources[s].V3Score!] : [],
  );
  return preferred[0] ?? Object.values(sources).find((s) => s.V3Score !== undefined)?.V3Score ?? null;
}

function findingOf(v: TrivyVulnerability, target: string, part: string | null): Finding {
  const pkg: PackageRef = (v.PkgIdentifier?.PURL && fromPurl(v.PkgIdentifier.PURL)) || {
    name: v.PkgName,
    version: v.InstalledVersion ?? null,
    purl: null,
  };
  // Trivy's own names win over a purl's spelling (`openssl` for `pkg:deb/debian/openssl`).
  const coordinate = packageCoordinate(v.PkgName, v.InstalledVersion);
  const severity: Severity = v.Severity === "UNKNOWN" ? "low" : (v.Severity.toLowerCase() as Severity);
  const text = [v.Title, v.Description].filter(Boolean).join("\n\n") || v.VulnerabilityID;
  const aliases = canonicalIds([v.VulnerabilityID, ...(v.VendorIDs ?? [])]);
  return {
    fingerprint: fingerprintOf("trivy", "Trivy", [v.VulnerabilityID, packageLocation(pkg), target]),
    title: titleOf(`${v.VulnerabilityID} in ${coordinate}`),
    description: clip(text, TEXT_MAX),
    severity,
    cwe: cweOf(v.CweIDs ?? []),
    cve: cveOf(aliases),
    cvssScore: cvssScoreFor(severity, v3Score(v)),
    introducedIn: coordinate,
    remediation: v.FixedVersion
      ? `Upgrade ${v.PkgName} to ${v.FixedVersion}`
      : `No fixed version of ${v.PkgName} is known yet${v.PrimaryURL ? `; see ${v.PrimaryURL}` : ""}`,
    packageName: v.PkgName,
    packageVersion: v.InstalledVersion ?? null,
    location: packageLocation(pkg),
    aliases,
    part,
  };
}

export const trivyReport: ReportParser = {
  format: "trivy",

  detect: (document) =>
    isObject(document) && document["SchemaVersion"] === 2 && ("Results" in document || "ArtifactName" in document),

  parse(document) {
    const report = checkShape(trivySchema, document, "Trivy JSON report (SchemaVersion 2)");
    const results = report.Results ?? [];
    const findings = results.flatMap((result) => {
      const part = partOf(result);
      return (result.Vulnerabilities ?? [])
        .filter((v) => v.Status !== "not_affected")
        .map((v) => findingOf(v, result.Target, part));
    });
    const parts = results.flatMap((result) => partOf(result) ?? []);
    return {
      format: "trivy",
      tool: "Trivy",
      toolVersion: report.Trivy?.Version ?? null,
      scanType: report.ArtifactType === "container_image" ? "container" : "sca",
      findings,
      failure: null,
      coverage: { parts: [...new Set(parts)], partFailed: false },
    };
  },
};
