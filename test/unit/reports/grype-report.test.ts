// The Grype report parser (docs/spec/CONTRACT.md §11) against reports written here in the shape
// `grype <target> -o json` gives them: matches of a vulnerability against an artifact.
import type { Finding } from "../../../src/domain/vulnerabilities/finding.ts";
import { DomainError } from "../../../src/errors.ts";
import { grypeReport } from "../../../src/scans/reports/grype-report.ts";
import { readReport } from "../../../src/scans/reports/read-report.ts";
import type { ParsedReport } from "../../../src/scans/reports/report.ts";
import { invalidPaths, onlyFinding } from "../../helpers/report-parsing.ts";

type Json = Record<string, unknown>;
/** What a JSON file holds: keys set to undefined (to leave a field out) disappear. */
const asJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

// Written out here rather than imported, so a wrong band in the code fails these tests.
const BAND_FLOOR = { critical: 9.0, high: 7.0, medium: 4.0, low: 0.1 } as const;

// ---- report builders ------------------------------------------------------------------------

/** One CVSS entry as Grype writes them (`metrics` holds the three scores). */
function cvss(version: string, vector: string, baseScore: number, source = "nvd@nist.gov"): Json {
  return {
    source,
    type: "Primary",
    version,
    vector,
    metrics: { baseScore, exploitabilityScore: 3.9, impactScore: 3.6 },
    vendorMetadata: {},
  };
}

const OPENSSL_PURL = "pkg:apk/alpine/libcrypto3@3.1.3-r0?arch=x86_64&distro=alpine-3.18.4";

/** A match of an Alpine secdb vulnerability (no CVSS of its own) whose NVD record scores it. */
function apkMatch(overrides: { vulnerability?: Json; related?: unknown; artifact?: Json } = {}): Json {
  return asJson({
    vulnerability: {
      id: "CVE-2023-5363",
      dataSource: "https://security.alpinelinux.org/vuln/CVE-2023-5363",
      namespace: "alpine:distro:alpine:3.18",
      severity: "High",
      urls: ["https://security.alpinelinux.org/vuln/CVE-2023-5363"],
      cvss: [],
      fix: { versions: ["3.1.4-r0"], state: "fixed" },
      advisories: [],
      ...overrides.vulnerability,
    },
    relatedVulnerabilities: overrides.related ?? [
      {
        id: "CVE-2023-5363",
        dataSource: "https://nvd.nist.gov/vuln/detail/CVE-2023-5363",
        namespace: "nvd:cpe",
        severity: "High",
        urls: ["https://www.openssl.org/news/secadv/20231024.txt"],
        description:
          "Issue summary: A bug has been identified in the processing of key and initialisation vector (IV) lengths.",
        cvss: [cvss("3.1", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N", 7.5)],
      },
    ],
    matchDetails: [
      {
        type: "exact-direct-match",
        matcher: "apk-matcher",
        searchedBy: {
          distro: { type: "alpine", version: "3.18.4" },
          namespace: "alpine:distro:alpine:3.18",
          package: { name: "openssl", version: "3.1.3-r0" },
        },
        found: { versionConstraint: "< 3.1.4-r0 (apk)", vulnerabilityID: "CVE-2023-5363" },
      },
    ],
    artifact: {
      id: "2c8f3e9a1b7d4c60",
      name: "libcrypto3",
      version: "3.1.3-r0",
      type: "apk",
      locations: [
        {
          path: "/lib/apk/db/installed",
          layerID: "sha256:cc2447e1835a40530975ab80bb1f872fbab0f2a0faecf2ab16fbbb89b3589438",
        },
      ],
      language: "",
      licenses: ["Apache-2.0"],
      cpes: ["cpe:2.3:a:libcrypto3:libcrypto3:3.1.3-r0:*:*:*:*:*:*:*"],
      purl: OPENSSL_PURL,
      upstreams: [{ name: "openssl" }],
      ...overrides.artifact,
    },
  });
}

const BABEL_PURL = "pkg:npm/%40babel/traverse@7.22.5";

/** A match of a GitHub advisory (GHSA id) against an npm package, its CVE among the related ones. */
function npmMatch(overrides: { vulnerability?: Json; related?: unknown; artifact?: Json } = {}): Json {
  return asJson({
    vulnerability: {
      id: "GHSA-67hx-6x53-jw92",
      dataSource: "https://github.com/advisories/GHSA-67hx-6x53-jw92",
      namespace: "github:language:javascript",
      severity: "Critical",
      urls: ["https://github.com/advisories/GHSA-67hx-6x53-jw92"],
      description: "Babel vulnerable to arbitrary code execution when compiling specifically crafted malicious code",
      // A v2 score first (higher than the v3 one): the v3 score must win.
      cvss: [
        cvss("2.0", "AV:N/AC:L/Au:N/C:C/I:C/A:C", 10.0, "github"),
        cvss("3.1", "CVSS:3.1/AV:L/AC:L/PR:N/UI:R/S:C/C:H/I:H/A:H", 9.3, "github"),
      ],
      fix: { versions: ["7.23.2", "8.0.0-alpha.4"], state: "fixed" },
      advisories: [],
      ...overrides.vulnerability,
    },
    relatedVulnerabilities: overrides.related ?? [
      {
        id: "CVE-2023-45133",
        dataSource: "https://nvd.nist.gov/vuln/detail/CVE-2023-45133",
        namespace: "nvd:cpe",
        severity: "Critical",
        urls: [],
        description: "Babel is a compiler for writing next generation JavaScript.",
        cvss: [cvss("3.1", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", 9.8)],
      },
    ],
    matchDetails: [
      {
        type: "exact-direct-match",
        matcher: "javascript-matcher",
        searchedBy: {
          language: "javascript",
          namespace: "github:language:javascript",
          package: { name: "@babel/traverse", version: "7.22.5" },
        },
        found: { versionConstraint: "<7.23.2 (unknown)", vulnerabilityID: "GHSA-67hx-6x53-jw92" },
      },
    ],
    artifact: {
      id: "9d1e0c4b7a3f2e18",
      name: "@babel/traverse",
      version: "7.22.5",
      type: "npm",
      locations: [{ path: "/package-lock.json" }],
      language: "javascript",
      licenses: ["MIT"],
      cpes: ["cpe:2.3:a:babel\\/traverse:babel\\/traverse:7.22.5:*:*:*:*:*:*:*"],
      purl: BABEL_PURL,
      upstreams: [],
      ...overrides.artifact,
    },
  });
}

const DESCRIPTOR = {
  name: "grype",
  version: "0.74.0",
  configuration: { output: ["json"] },
  db: { built: "2024-01-10T01:31:08Z", schemaVersion: 5 },
  timestamp: "2024-01-10T10:00:00Z",
};

/** `grype alpine:3.18 -o json`. */
function imageReport(matches: unknown[] = [apkMatch(), npmMatch()], extra: Json = {}): Json {
  return asJson({
    matches,
    source: {
      type: "image",
      target: {
        userInput: "alpine:3.18",
        imageID: "sha256:8ca4688f4f356596b5ae539337c9941abc78eda10021d35cbc52659c74d9b443",
        manifestDigest: "sha256:cc2447e1835a40530975ab80bb1f872fbab0f2a0faecf2ab16fbbb89b3589438",
        mediaType: "application/vnd.docker.distribution.manifest.v2+json",
        tags: ["alpine:3.18"],
        imageSize: 7_342_000,
        layers: [],
        repoDigests: ["alpine@sha256:34871e7290500828b39e22294660bee86d966bc0017544e848dd9a255cdf59e0"],
        architecture: "amd64",
        os: "linux",
      },
    },
    distro: { name: "alpine", version: "3.18.4", idLike: [] },
    descriptor: DESCRIPTOR,
    ...extra,
  });
}

/** `grype dir:. -o json` over a checkout. */
function directoryReport(matches: unknown[] = [npmMatch()], extra: Json = {}): Json {
  return asJson({
    matches,
    source: { type: "directory", target: "." },
    distro: { name: "", version: "", idLike: null },
    descriptor: DESCRIPTOR,
    ...extra,
  });
}

const pathsOfInvalid = (document: unknown) => invalidPaths(parse, document);
const parse = (document: unknown): ParsedReport => grypeReport.parse(document);
const only = (report: ParsedReport): Finding => onlyFinding(report.findings);
/** The findings of a directory report holding these matches. */
const findingsOf = (...matches: Json[]): Finding[] => parse(directoryReport(matches)).findings;

function readError(document: unknown, format?: string): DomainError {
  try {
    readReport(document, format);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error("readReport accepted the document");
}
const errorPaths = (document: unknown): string[] => {
  const error = readError(document);
  expect(error.kind).toBe("invalid");
  return (error.details.errors ?? []).map((e) => e.path);
};

// ---- tests ----------------------------------------------------------------------------------

describe("grypeReport.detect", () => {
  it("recognises image and directory reports", () => {
    expect(grypeReport.detect(imageReport())).toBe(true);
    expect(grypeReport.detect(directoryReport())).toBe(true);
    expect(grypeReport.detect({ matches: [], descriptor: { name: "grype" } })).toBe(true);
  });

  it.each<[string, unknown]>([
    ["a SARIF log", { version: "2.1.0", runs: [] }],
    ["a Trivy report", { SchemaVersion: 2, ArtifactName: ".", Results: [] }],
    ["a ZAP report", { "@programName": "ZAP", "@version": "2.15.0", site: [] }],
    ["matches without source nor descriptor", { matches: [] }],
    ["matches that are not an array", { matches: {}, descriptor: { name: "grype" } }],
    ["null", null],
    ["an array", [apkMatch()]],
  ])("rejects %s", (_what, document) => {
    expect(grypeReport.detect(document)).toBe(false);
  });
});

describe("grypeReport.parse — an image report", () => {
  const report = parse(imageReport());

  it("names the format, the tool and its version, and the container scan type", () => {
    expect(report.format).toBe("grype");
    expect(report.tool).toBe("Grype");
    expect(report.toolVersion).toBe("0.74.0");
    expect(report.scanType).toBe("container");
  });

  it("makes one finding per match, in the report's order", () => {
    expect(report.findings.map((f) => f.packageName)).toEqual(["libcrypto3", "@babel/traverse"]);
    expect(new Set(report.findings.map((f) => f.fingerprint)).size).toBe(2);
  });

  it("maps an OS package match field by field", () => {
    const finding = report.findings[0]!;
    expect(finding.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(finding.title).toBe("CVE-2023-5363 in libcrypto3@3.1.3-r0");
    // The vulnerability has no description of its own: its NVD record's.
    expect(finding.description).toBe(
      "Issue summary: A bug has been identified in the processing of key and initialisation vector (IV) lengths.",
    );
    expect(finding.severity).toBe("high");
    expect(finding.cwe).toBe("CWE-0");
    expect(finding.cve).toBe("CVE-2023-5363");
    // Alpine's record has no CVSS; the related NVD record's v3.1 score is the report's.
    expect(finding.cvssScore).toBe(7.5);
    expect(finding.introducedIn).toBe("libcrypto3@3.1.3-r0");
    expect(finding.remediation).toContain("libcrypto3");
    expect(finding.remediation).toContain("3.1.4-r0");
    expect(finding.packageName).toBe("libcrypto3");
    expect(finding.packageVersion).toBe("3.1.3-r0");
    expect(finding.location).toBe(OPENSSL_PURL);
  });

  it("maps a GitHub advisory match field by field, its CVE taken from the related vulnerabilities", () => {
    const finding = report.findings[1]!;
    expect(finding.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(finding.title).toBe("GHSA-67hx-6x53-jw92 in @babel/traverse@7.22.5");
    expect(finding.description).toBe(
      "Babel vulnerable to arbitrary code execution when compiling specifically crafted malicious code",
    );
    expect(finding.severity).toBe("critical");
    expect(finding.cwe).toBe("CWE-0");
    expect(finding.cve).toBe("CVE-2023-45133");
    // The advisory's own v3.1 score: neither its v2 score (10.0) nor NVD's (9.8).
    expect(finding.cvssScore).toBe(9.3);
    expect(finding.introducedIn).toBe("@babel/traverse@7.22.5");
    expect(finding.remediation).toContain("@babel/traverse");
    expect(finding.remediation).toContain("7.23.2");
    expect(finding.remediation).toContain("8.0.0-alpha.4");
    expect(finding.packageName).toBe("@babel/traverse");
    expect(finding.packageVersion).toBe("7.22.5");
    expect(finding.location).toBe(BABEL_PURL);
  });
});

describe("grypeReport.parse — a directory report", () => {
  it("is an sca report", () => {
    const report = parse(directoryReport());
    expect(report.scanType).toBe("sca");
    expect(report.format).toBe("grype");
    expect(report.tool).toBe("Grype");
    expect(only(report).cve).toBe("CVE-2023-45133");
  });

  it("has no findings when nothing matched", () => {
    const report = parse(directoryReport([]));
    expect(report.findings).toEqual([]);
    expect(report.scanType).toBe("sca");
  });

  it("has no tool version when the descriptor gives none", () => {
    const report = parse(directoryReport([npmMatch()], { descriptor: { name: "grype" } }));
    expect(report.toolVersion).toBeNull();
    expect(report.tool).toBe("Grype");
  });
});

describe("grypeReport.parse — severity and CVSS score", () => {
  it.each<[string, keyof typeof BAND_FLOOR]>([
    ["Critical", "critical"],
    ["High", "high"],
    ["Medium", "medium"],
    ["Low", "low"],
    ["Unknown", "low"],
  ])("maps %s to %s, scored at the band's floor when the report has no CVSS v3 score", (grype, severity) => {
    const [finding] = findingsOf(apkMatch({ vulnerability: { severity: grype, cvss: [] }, related: [] }));
    expect(finding!.severity).toBe(severity);
    expect(finding!.cvssScore).toBe(BAND_FLOOR[severity]);
  });

  it("ignores CVSS v2 scores when scoring", () => {
    const v2Only = [
      { id: "CVE-2023-5363", namespace: "nvd:cpe", cvss: [cvss("2.0", "AV:N/AC:L/Au:N/C:P/I:N/A:N", 5.0)] },
    ];
    const [finding] = findingsOf(apkMatch({ vulnerability: { severity: "Medium" }, related: v2Only }));
    expect(finding!.cvssScore).toBe(4.0);
  });

  it("takes a CVSS v3.0 score as well as a v3.1 one", () => {
    const v30 = [
      {
        id: "CVE-2023-5363",
        namespace: "nvd:cpe",
        cvss: [cvss("3.0", "CVSS:3.0/AV:N/AC:H/PR:N/UI:N/S:U/C:L/I:L/A:N", 4.8)],
      },
    ];
    const [finding] = findingsOf(apkMatch({ vulnerability: { severity: "Medium" }, related: v30 }));
    expect(finding!.cvssScore).toBe(4.8);
  });

  it("keeps a Negligible match that names a CVE, as low", () => {
    const [finding] = findingsOf(apkMatch({ vulnerability: { severity: "Negligible", cvss: [] }, related: [] }));
    expect(finding!.severity).toBe("low");
    expect(finding!.cve).toBe("CVE-2023-5363");
    expect(finding!.cvssScore).toBe(BAND_FLOOR.low);
  });

  it("keeps a Negligible advisory whose CVE is only among the related vulnerabilities", () => {
    const [finding] = findingsOf(
      npmMatch({
        vulnerability: { severity: "Negligible", cvss: [] },
        related: [{ id: "CVE-2023-45133", namespace: "nvd:cpe" }],
      }),
    );
    expect(finding!.severity).toBe("low");
    expect(finding!.cve).toBe("CVE-2023-45133");
  });

  it("skips a Negligible match without a CVE, keeping the others", () => {
    const findings = findingsOf(
      npmMatch({ vulnerability: { severity: "Negligible" }, related: [] }),
      npmMatch({
        vulnerability: { severity: "Negligible" },
        related: [{ id: "GHSA-aaaa-bbbb-cccc", namespace: "github:language:javascript" }],
      }),
      apkMatch(),
    );
    expect(findings.map((f) => f.cve)).toEqual(["CVE-2023-5363"]);
  });
});

describe("grypeReport.parse — CVE, package and remediation", () => {
  it("has no CVE when neither the id nor the related ids is one", () => {
    const [finding] = findingsOf(npmMatch({ vulnerability: { id: "GHSA-67hx-6x53-jw92" }, related: [] }));
    expect(finding!.cve).toBeNull();
    expect(finding!.title).toBe("GHSA-67hx-6x53-jw92 in @babel/traverse@7.22.5");
  });

  it("upper-cases a CVE id written in lower case", () => {
    const [finding] = findingsOf(npmMatch({ related: [{ id: "cve-2023-45133", namespace: "nvd:cpe" }] }));
    expect(finding!.cve).toBe("CVE-2023-45133");
  });

  it("locates an artifact without a package URL by name@version", () => {
    const [finding] = findingsOf(npmMatch({ artifact: { purl: undefined, name: "left-pad", version: "1.1.0" } }));
    expect(finding!.location).toBe("left-pad@1.1.0");
    expect(finding!.packageName).toBe("left-pad");
    expect(finding!.packageVersion).toBe("1.1.0");
    expect(finding!.introducedIn).toBe("left-pad@1.1.0");
  });

  it("says no fix is known when the fix state is not-fixed", () => {
    const [finding] = findingsOf(apkMatch({ vulnerability: { fix: { versions: [], state: "not-fixed" } } }));
    expect(finding!.remediation).toContain("libcrypto3");
    expect(finding!.remediation).not.toMatch(/upgrade/i);
  });

  it("falls back on the id when no description is given anywhere", () => {
    const [finding] = findingsOf(apkMatch({ related: [{ id: "CVE-2023-5363", namespace: "nvd:cpe" }] }));
    expect(finding!.description).toBe("CVE-2023-5363");
  });
});

describe("grypeReport.parse — fingerprints", () => {
  const fingerprintOf = (document: Json): string => only(parse(document)).fingerprint;

  it("are the same for every parse of the same report", () => {
    const first = parse(imageReport()).findings.map((f) => f.fingerprint);
    const second = parse(imageReport()).findings.map((f) => f.fingerprint);
    expect(second).toEqual(first);
  });

  it("do not change with what describes the vulnerability (severity, scores, description, fix, match details)", () => {
    const base = fingerprintOf(imageReport([apkMatch()]));
    const rescanned = apkMatch({
      vulnerability: {
        severity: "Critical",
        description: "Reworded.",
        fix: { versions: ["3.1.5-r0"], state: "fixed" },
      },
      related: [
        {
          id: "CVE-2023-5363",
          namespace: "nvd:cpe",
          cvss: [cvss("3.1", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", 9.8)],
        },
      ],
    });
    (rescanned["matchDetails"] as Json[]).length = 0;
    expect(fingerprintOf(imageReport([rescanned]))).toBe(base);
  });

  it("differ by vulnerability id, package version and scanned target", () => {
    const base = fingerprintOf(imageReport([apkMatch()]));
    const others = [
      fingerprintOf(imageReport([apkMatch({ vulnerability: { id: "CVE-2023-6129" }, related: [] })])),
      fingerprintOf(
        imageReport([
          apkMatch({
            artifact: {
              version: "3.1.3-r1",
              purl: "pkg:apk/alpine/libcrypto3@3.1.3-r1?arch=x86_64&distro=alpine-3.18.4",
            },
          }),
        ]),
      ),
      fingerprintOf(directoryReport([apkMatch()])),
      fingerprintOf(imageReport([apkMatch()], { source: { type: "image", target: { userInput: "alpine:3.19" } } })),
    ];
    expect(new Set([base, ...others]).size).toBe(5);
  });

  it("differ for the same vulnerability in two packages", () => {
    const findings = findingsOf(
      apkMatch(),
      apkMatch({
        artifact: { name: "libssl3", purl: "pkg:apk/alpine/libssl3@3.1.3-r0?arch=x86_64&distro=alpine-3.18.4" },
      }),
    );
    expect(findings).toHaveLength(2);
    expect(findings[0]!.fingerprint).not.toBe(findings[1]!.fingerprint);
  });
});

describe("grypeReport.parse — invalid reports", () => {
  it("names the severity Grype does not write", () => {
    expect(pathsOfInvalid(imageReport([apkMatch(), apkMatch({ vulnerability: { severity: "Severe" } })]))).toEqual([
      "/matches/1/vulnerability/severity",
    ]);
  });

  it("names a match without an artifact name, and a vulnerability without an id", () => {
    const paths = pathsOfInvalid(
      directoryReport([npmMatch({ artifact: { name: undefined } }), npmMatch({ vulnerability: { id: undefined } })]),
    );
    expect(paths).toEqual(expect.arrayContaining(["/matches/0/artifact/name", "/matches/1/vulnerability/id"]));
  });

  it("names matches that are not an array", () => {
    expect(pathsOfInvalid({ matches: "none", descriptor: DESCRIPTOR })).toEqual(["/matches"]);
  });
});

describe("readReport with Grype reports", () => {
  it("detects an image and a directory report as Grype", () => {
    const image = readReport(imageReport());
    expect(image.format).toBe("grype");
    expect(image.scanType).toBe("container");
    expect(image.findings).toEqual(parse(imageReport()).findings);
    expect(readReport(directoryReport()).format).toBe("grype");
  });

  it("reads a report named as Grype", () => {
    expect(readReport(directoryReport(), "grype").findings).toHaveLength(1);
  });

  it("answers a validation error with the JSON Pointer of a severity Grype does not write", () => {
    expect(errorPaths(imageReport([apkMatch({ vulnerability: { severity: "Severe" } })]))).toEqual([
      "/matches/0/vulnerability/severity",
    ]);
  });

  it("answers a validation error when a Grype report is named as another format", () => {
    const error = readError(imageReport(), "trivy");
    expect(error.kind).toBe("invalid");
    expect(error.details.errors?.length).toBeGreaterThan(0);
  });
});
