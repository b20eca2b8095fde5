// The Trivy report parser (docs/spec/CONTRACT.md §11) against reports written here in the shape
// `trivy image|fs --format json` gives them (SchemaVersion 2).
import type { Finding } from "../../../src/domain/vulnerabilities/finding.ts";
import { cyclonedxReport } from "../../../src/scans/reports/cyclonedx-report.ts";
import type { ParsedReport } from "../../../src/scans/reports/report.ts";
import { trivyReport } from "../../../src/scans/reports/trivy-report.ts";
import { hasLoneSurrogate, invalidErrors, invalidPaths, onlyFinding } from "../../helpers/report-parsing.ts";

type Json = Record<string, unknown>;
/** What a JSON file holds: keys set to undefined (to leave a field out) disappear. */
const asJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

// Written out here rather than imported, so a wrong band in the code fails these tests.
const BAND_FLOOR = { critical: 9.0, high: 7.0, medium: 4.0, low: 0.1 } as const;

// ---- report builders ------------------------------------------------------------------------

const LAYER = {
  Digest: "sha256:5d0da3dc976460b72c77d94c8a1ad043720b0416bfc16c52c45d4847e53fadb6",
  DiffID: "sha256:7d3a2b6c1e8f9a0b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b",
};

/** One entry of a result's Vulnerabilities, with every field Trivy writes for an OS package. */
function osVulnerability(overrides: Json = {}): Json {
  return asJson({
    VulnerabilityID: "CVE-2024-20101",
    VendorIDs: ["DSA-5690-1"],
    PkgID: "libssl3@3.0.11-1~deb12u2",
    PkgName: "libssl3",
    PkgIdentifier: {
      PURL: "pkg:deb/debian/libssl3@3.0.11-1~deb12u2?arch=amd64&distro=debian-12.4",
      UID: "8c1f3b2a90d4e7f6",
    },
    InstalledVersion: "3.0.11-1~deb12u2",
    FixedVersion: "3.0.13-1~deb12u1",
    Status: "fixed",
    Layer: LAYER,
    SeveritySource: "nvd",
    PrimaryURL: "https://avd.aquasec.com/nvd/cve-2024-20101",
    DataSource: {
      ID: "debian",
      Name: "Debian Security Tracker",
      URL: "https://salsa.debian.org/security-tracker-team/security-tracker",
    },
    Title: "openssl: excessive time spent checking long DH keys",
    Description: "Checking excessively long DH keys or parameters may be very slow, allowing a denial of service.",
    Severity: "HIGH",
    CweIDs: ["CWE-834", "CWE-400"],
    VendorSeverity: { debian: 1, nvd: 3 },
    CVSS: {
      nvd: { V3Vector: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H", V3Score: 7.5 },
      redhat: { V3Vector: "CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:N/I:N/A:L", V3Score: 3.7 },
    },
    References: [
      "https://www.openssl.org/news/secadv/20240115.txt",
      "https://security-tracker.debian.org/tracker/CVE-2024-20101",
    ],
    PublishedDate: "2024-01-15T16:15:12.41Z",
    LastModifiedDate: "2024-02-02T11:10:05.87Z",
    ...overrides,
  });
}

/** One entry for a language package (npm), as found in a lock file. */
function npmVulnerability(overrides: Json = {}): Json {
  return asJson({
    VulnerabilityID: "CVE-2024-31001",
    VendorIDs: [],
    PkgID: "template-kit@4.1.0",
    PkgName: "template-kit",
    PkgPath: "usr/src/app/node_modules/template-kit/package.json",
    PkgIdentifier: { PURL: "pkg:npm/template-kit@4.1.0", UID: "f00dfeed12345678" },
    InstalledVersion: "4.1.0",
    FixedVersion: "4.1.2",
    Status: "fixed",
    Layer: LAYER,
    SeveritySource: "ghsa",
    PrimaryURL: "https://avd.aquasec.com/nvd/cve-2024-31001",
    DataSource: {
      ID: "ghsa",
      Name: "GitHub Security Advisory npm",
      URL: "https://github.com/advisories?query=type%3Areviewed+ecosystem%3Anpm",
    },
    Title: "template-kit: code injection via template variable names",
    Description: "template-kit compiles templates with the Function constructor; a crafted variable name runs code.",
    Severity: "CRITICAL",
    CweIDs: ["CWE-94"],
    VendorSeverity: { ghsa: 4, nvd: 3 },
    CVSS: {
      ghsa: { V3Vector: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H", V3Score: 9.6 },
      nvd: { V3Vector: "CVSS:3.1/AV:N/AC:L/PR:H/UI:N/S:U/C:H/I:H/A:H", V3Score: 7.2 },
    },
    References: ["https://github.com/advisories/GHSA-7wq3-9cxp-2m4f"],
    PublishedDate: "2024-04-02T09:00:00Z",
    LastModifiedDate: "2024-04-10T09:00:00Z",
    ...overrides,
  });
}

const OS_TARGET = "registry.example.com/payments-api:3.2.0 (debian 12.4)";
const NODE_TARGET = "Node.js";

function osResult(vulnerabilities: unknown = [osVulnerability()]): Json {
  return { Target: OS_TARGET, Class: "os-pkgs", Type: "debian", Vulnerabilities: vulnerabilities };
}
function nodeResult(vulnerabilities: unknown = [npmVulnerability()], target = NODE_TARGET): Json {
  return { Target: target, Class: "lang-pkgs", Type: "node-pkg", Vulnerabilities: vulnerabilities };
}

/** `trivy image --format json`. */
function imageReport(results: Json[] = [osResult(), nodeResult()], extra: Json = {}): Json {
  return asJson({
    SchemaVersion: 2,
    CreatedAt: "2024-05-02T10:15:00.123456789Z",
    ArtifactName: "registry.example.com/payments-api:3.2.0",
    ArtifactType: "container_image",
    Metadata: {
      Size: 187_654_144,
      OS: { Family: "debian", Name: "12.4" },
      ImageID: "sha256:2b7c4f1a9e0d8c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b",
      DiffIDs: [LAYER.DiffID],
      RepoTags: ["registry.example.com/payments-api:3.2.0"],
      RepoDigests: [
        "registry.example.com/payments-api@sha256:4f1c0b9e6a7d8c5b3a2e1f0d9c8b7a6e5f4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b",
      ],
      ImageConfig: {
        architecture: "amd64",
        os: "linux",
        rootfs: { type: "layers", diff_ids: [LAYER.DiffID] },
        config: {},
      },
    },
    Results: results,
    Trivy: { Version: "0.52.2" },
    ...extra,
  });
}

/** `trivy fs --format json` over a checkout. */
function fsReport(results: Json[] = [nodeResult([npmVulnerability()], "package-lock.json")], extra: Json = {}): Json {
  return asJson({
    SchemaVersion: 2,
    CreatedAt: "2024-05-02T10:15:00.123456789Z",
    ArtifactName: ".",
    ArtifactType: "filesystem",
    Metadata: {
      ImageConfig: {
        architecture: "",
        created: "0001-01-01T00:00:00Z",
        os: "",
        rootfs: { type: "", diff_ids: null },
        config: {},
      },
    },
    Results: results,
    Trivy: { Version: "0.52.2" },
    ...extra,
  });
}

const parse = (document: unknown): ParsedReport => trivyReport.parse(document);
const only = (report: ParsedReport): Finding => onlyFinding(report.findings);
/** The single finding of a filesystem report holding this one vulnerability. */
const one = (vulnerability: Json): Finding => only(parse(fsReport([nodeResult([vulnerability], "package-lock.json")])));

const invalidErrorsOf = (document: unknown) => invalidErrors(parse, document);
const pathsOf = (document: unknown) => invalidPaths(parse, document);

// ---- tests ----------------------------------------------------------------------------------

describe("trivyReport.detect", () => {
  it("recognises image and filesystem reports", () => {
    expect(trivyReport.detect(imageReport())).toBe(true);
    expect(trivyReport.detect(fsReport())).toBe(true);
    expect(trivyReport.detect({ SchemaVersion: 2, ArtifactName: "alpine:3.19", ArtifactType: "container_image" })).toBe(
      true,
    );
  });

  it.each<[string, unknown]>([
    [
      "a CycloneDX BOM",
      { bomFormat: "CycloneDX", specVersion: "1.6", version: 1, components: [], vulnerabilities: [] },
    ],
    [
      "a Grype JSON report",
      {
        matches: [],
        source: { type: "image", target: { userInput: "alpine:3.19" } },
        descriptor: { name: "grype", version: "0.74.0" },
      },
    ],
    ["a SARIF log", { $schema: "https://json.schemastore.org/sarif-2.1.0.json", version: "2.1.0", runs: [] }],
    [
      "a ZAP report",
      { "@programName": "ZAP", "@version": "2.14.0", "@generated": "Thu, 2 May 2024 10:15:00", site: [] },
    ],
    ["a SchemaVersion 1 report", { SchemaVersion: 1, ArtifactName: "alpine:3.19", Results: [] }],
    ["the legacy bare array of results", [{ Target: "alpine:3.19 (alpine 3.19.1)", Vulnerabilities: null }]],
    ["an object with only SchemaVersion 2", { SchemaVersion: 2 }],
    ["null", null],
    ["a string", "SchemaVersion"],
  ])("rejects %s", (_what, document) => {
    expect(trivyReport.detect(document)).toBe(false);
  });

  it("is not mistaken for CycloneDX by the CycloneDX parser", () => {
    expect(cyclonedxReport.detect(imageReport())).toBe(false);
    expect(cyclonedxReport.detect(fsReport())).toBe(false);
  });
});

describe("trivyReport.parse — an image report", () => {
  const report = parse(
    imageReport([
      osResult([
        osVulnerability(),
        osVulnerability({
          VulnerabilityID: "CVE-2024-20102",
          Severity: "MEDIUM",
          CVSS: { nvd: { V3Score: 5.9 } },
          CweIDs: ["CWE-1325"],
        }),
      ]),
      nodeResult([npmVulnerability()]),
      {
        Target: "/usr/src/app/.env",
        Class: "secret",
        Secrets: [{ RuleID: "aws-access-key-id", Severity: "CRITICAL", Title: "AWS Access Key ID" }],
      },
    ]),
  );

  it("names the format, the tool and its version, and the container scan type", () => {
    expect(report.format).toBe("trivy");
    expect(report.tool).toBe("Trivy");
    expect(report.toolVersion).toBe("0.52.2");
    expect(report.scanType).toBe("container");
  });

  it("makes one finding per vulnerability over all results, none for a secrets result", () => {
    expect(report.findings.map((f) => f.cve)).toEqual(["CVE-2024-20101", "CVE-2024-20102", "CVE-2024-31001"]);
    expect(new Set(report.findings.map((f) => f.fingerprint)).size).toBe(3);
  });

  it("maps an OS package vulnerability field by field", () => {
    const finding = report.findings[0]!;
    const source = osVulnerability();
    expect(finding.fingerprint).toMatch(/^\S+$/);
    expect(finding.title).toContain("CVE-2024-20101");
    expect(finding.title).toContain("libssl3@3.0.11-1~deb12u2");
    expect(finding.description).toContain(source["Title"]);
    expect(finding.description).toContain(source["Description"]);
    expect(finding.severity).toBe("high");
    // The lowest of CWE-834 and CWE-400.
    expect(finding.cwe).toBe("CWE-400");
    expect(finding.cve).toBe("CVE-2024-20101");
    // SeveritySource nvd: NVD's score, not Red Hat's.
    expect(finding.cvssScore).toBe(7.5);
    expect(finding.introducedIn).toBe("libssl3@3.0.11-1~deb12u2");
    expect(finding.remediation).toContain("libssl3");
    expect(finding.remediation).toContain("3.0.13-1~deb12u1");
    expect(finding.packageName).toBe("libssl3");
    expect(finding.packageVersion).toBe("3.0.11-1~deb12u2");
    expect(finding.location).toBe("pkg:deb/debian/libssl3@3.0.11-1~deb12u2?arch=amd64&distro=debian-12.4");
  });

  it("maps a second vulnerability of the same package on its own", () => {
    const finding = report.findings[1]!;
    expect(finding).toMatchObject({
      severity: "medium",
      cvssScore: 5.9,
      cwe: "CWE-1325",
      cve: "CVE-2024-20102",
      packageName: "libssl3",
    });
    expect(finding.title).toContain("CVE-2024-20102");
    expect(finding.fingerprint).not.toBe(report.findings[0]!.fingerprint);
  });

  it("maps a language package vulnerability field by field", () => {
    const finding = report.findings[2]!;
    const source = npmVulnerability();
    expect(finding.title).toContain("CVE-2024-31001");
    expect(finding.title).toContain("template-kit@4.1.0");
    expect(finding.description).toContain(source["Title"]);
    expect(finding.description).toContain(source["Description"]);
    expect(finding.severity).toBe("critical");
    expect(finding.cwe).toBe("CWE-94");
    expect(finding.cve).toBe("CVE-2024-31001");
    // SeveritySource ghsa: GitHub's 9.6, not NVD's 7.2.
    expect(finding.cvssScore).toBe(9.6);
    expect(finding.introducedIn).toBe("template-kit@4.1.0");
    expect(finding.remediation).toContain("template-kit");
    expect(finding.remediation).toContain("4.1.2");
    expect(finding.packageName).toBe("template-kit");
    expect(finding.packageVersion).toBe("4.1.0");
    expect(finding.location).toBe("pkg:npm/template-kit@4.1.0");
  });

  it("gives the same findings when the same report is parsed twice", () => {
    const document = imageReport();
    expect(parse(document)).toEqual(parse(structuredClone(document)));
  });
});

describe("trivyReport.parse — scan type and tool version", () => {
  it.each<[string, unknown, string]>([
    ["container_image", "container_image", "container"],
    ["filesystem", "filesystem", "sca"],
    ["repository", "repository", "sca"],
    ["no ArtifactType", undefined, "sca"],
  ])("%s → %s", (_what, artifactType, scanType) => {
    expect(parse(imageReport(undefined, { ArtifactType: artifactType })).scanType).toBe(scanType);
  });

  it("has no tool version when the report names none (older Trivy)", () => {
    const parsed = parse(fsReport(undefined, { Trivy: undefined }));
    expect(parsed.tool).toBe("Trivy");
    expect(parsed.toolVersion).toBeNull();
  });

  it("maps a filesystem report as sca, field by field", () => {
    const parsed = parse(fsReport());
    expect(parsed).toMatchObject({ format: "trivy", tool: "Trivy", toolVersion: "0.52.2", scanType: "sca" });
    expect(only(parsed)).toMatchObject({
      severity: "critical",
      cvssScore: 9.6,
      cwe: "CWE-94",
      cve: "CVE-2024-31001",
      introducedIn: "template-kit@4.1.0",
      packageName: "template-kit",
      packageVersion: "4.1.0",
      location: "pkg:npm/template-kit@4.1.0",
    });
  });
});

describe("trivyReport.parse — severity and score", () => {
  it.each<[string, keyof typeof BAND_FLOOR, number]>([
    ["CRITICAL", "critical", BAND_FLOOR.critical],
    ["HIGH", "high", BAND_FLOOR.high],
    ["MEDIUM", "medium", BAND_FLOOR.medium],
    ["LOW", "low", BAND_FLOOR.low],
    ["UNKNOWN", "low", BAND_FLOOR.low],
  ])("%s without a CVSS score → %s, %p", (Severity, severity, score) => {
    const finding = one(npmVulnerability({ Severity, CVSS: undefined, SeveritySource: undefined }));
    expect(finding.severity).toBe(severity);
    expect(finding.cvssScore).toBe(score);
  });

  it("uses NVD's v3 score when the severity's source has none", () => {
    const finding = one(
      osVulnerability({ SeveritySource: "debian", Severity: "MEDIUM", CVSS: { nvd: { V3Score: 5.5 } } }),
    );
    expect(finding.cvssScore).toBe(5.5);
  });

  it("uses any vendor's v3 score when neither the source nor NVD has one", () => {
    const finding = one(
      osVulnerability({ SeveritySource: "redhat", Severity: "MEDIUM", CVSS: { redhat: { V3Score: 6.1 } } }),
    );
    expect(finding.cvssScore).toBe(6.1);
  });

  it("does not take a CVSS v2 score for a v3 one", () => {
    const finding = one(
      osVulnerability({ Severity: "HIGH", CVSS: { nvd: { V2Vector: "AV:N/AC:L/Au:N/C:P/I:P/A:P", V2Score: 7.5 } } }),
    );
    expect(finding.severity).toBe("high");
    expect(finding.cvssScore).toBe(BAND_FLOOR.high);
  });

  it("rounds a score to one decimal", () => {
    expect(one(osVulnerability({ CVSS: { nvd: { V3Score: 7.46 } } })).cvssScore).toBe(7.5);
  });
});

describe("trivyReport.parse — CWE, CVE, package, texts", () => {
  it.each<[string[] | undefined, string]>([
    [["CWE-79"], "CWE-79"],
    [["CWE-787", "CWE-125", "CWE-416"], "CWE-125"],
    [["NVD-CWE-Other", "CWE-787"], "CWE-787"],
    [["NVD-CWE-noinfo"], "CWE-0"],
    [[], "CWE-0"],
    [undefined, "CWE-0"],
  ])("CweIDs %p → %s", (CweIDs, cwe) => {
    expect(one(npmVulnerability({ CweIDs })).cwe).toBe(cwe);
  });

  it("takes the CVE from VendorIDs when the id is not one", () => {
    const finding = one(npmVulnerability({ VulnerabilityID: "GHSA-4r6h-8v6p-xvw6", VendorIDs: ["CVE-2023-45857"] }));
    expect(finding.cve).toBe("CVE-2023-45857");
    expect(finding.title).toContain("GHSA-4r6h-8v6p-xvw6");
  });

  it("has no CVE when neither the id nor VendorIDs has one", () => {
    expect(
      one(npmVulnerability({ VulnerabilityID: "GO-2024-2687", VendorIDs: ["GHSA-4v7x-pqxf-cx7m"] })).cve,
    ).toBeNull();
    expect(one(npmVulnerability({ VulnerabilityID: "GHSA-4v7x-pqxf-cx7m", VendorIDs: undefined })).cve).toBeNull();
  });

  it("falls back to name@version without a package URL", () => {
    for (const PkgIdentifier of [undefined, { UID: "c0ffee00" }, { PURL: "not a package url" }]) {
      const finding = one(npmVulnerability({ PkgIdentifier }));
      expect(finding.packageName).toBe("template-kit");
      expect(finding.packageVersion).toBe("4.1.0");
      expect(finding.location).toBe("template-kit@4.1.0");
      expect(finding.introducedIn).toBe("template-kit@4.1.0");
    }
  });

  it("keeps Trivy's package name for a Maven package", () => {
    const finding = one(
      npmVulnerability({
        PkgName: "org.example.logging:log-core",
        PkgIdentifier: { PURL: "pkg:maven/org.example.logging/log-core@2.14.1" },
        InstalledVersion: "2.14.1",
      }),
    );
    expect(finding.packageName).toBe("org.example.logging:log-core");
    expect(finding.introducedIn).toBe("org.example.logging:log-core@2.14.1");
    expect(finding.location).toBe("pkg:maven/org.example.logging/log-core@2.14.1");
  });

  it("names the advisory when no fixed version is known", () => {
    const finding = one(osVulnerability({ FixedVersion: undefined, Status: "affected" }));
    expect(finding.remediation).toContain("libssl3");
    expect(finding.remediation).toContain("https://avd.aquasec.com/nvd/cve-2024-20101");
    expect(finding.remediation).not.toContain("3.0.13");
  });

  it("uses the description alone, or the id, when the title is missing", () => {
    const source = osVulnerability();
    expect(one(osVulnerability({ Title: undefined })).description).toBe(source["Description"]);
    expect(one(osVulnerability({ Title: undefined, Description: undefined })).description).toContain("CVE-2024-20101");
  });

  it("keeps unicode text intact", () => {
    const Title = "Überlauf im Parser — «日本語»";
    const Description = "テキスト with emoji 💥🔥, RTL שלום, combining é.";
    const finding = one(npmVulnerability({ Title, Description }));
    expect(finding.description).toContain(Title);
    expect(finding.description).toContain(Description);
  });

  it("clips a 100,000-character description to at most 20,000 characters", () => {
    const finding = one(npmVulnerability({ Title: "Start of a long advisory", Description: "y".repeat(100_000) }));
    expect(finding.description.length).toBeLessThanOrEqual(20_000);
    expect(finding.description.length).toBeGreaterThan(19_000);
    expect(finding.description.startsWith("Start of a long advisory")).toBe(true);
  });

  it("never cuts a surrogate pair in half when clipping", () => {
    for (const pad of [19_996, 19_997, 19_998, 19_999]) {
      const finding = one(npmVulnerability({ Title: undefined, Description: `${"a".repeat(pad)}${"🔥".repeat(100)}` }));
      expect(finding.description.length).toBeLessThanOrEqual(20_000);
      expect(hasLoneSurrogate(finding.description)).toBe(false);
    }
  });

  it("clips a very long title", () => {
    const finding = one(npmVulnerability({ PkgName: "p".repeat(1_000), PkgIdentifier: undefined }));
    expect(finding.title.length).toBeLessThanOrEqual(300);
    expect(finding.title).toContain("CVE-2024-31001");
  });
});

describe("trivyReport.parse — Status and empty results", () => {
  it("skips a vulnerability whose Status is not_affected", () => {
    const findings = parse(
      imageReport([
        osResult([osVulnerability({ Status: "not_affected" }), osVulnerability({ VulnerabilityID: "CVE-2024-20102" })]),
      ]),
    ).findings;
    expect(findings.map((f) => f.cve)).toEqual(["CVE-2024-20102"]);
  });

  it.each([
    "affected",
    "fixed",
    "will_not_fix",
    "fix_deferred",
    "end_of_life",
    "under_investigation",
    "unknown",
    undefined,
  ])("keeps a vulnerability whose Status is %p", (Status) => {
    expect(one(npmVulnerability({ Status })).cve).toBe("CVE-2024-31001");
  });

  it("reads results whose Vulnerabilities are null or absent, and reports with no results", () => {
    const empty = { Target: "requirements.txt", Class: "lang-pkgs", Type: "pip" };
    expect(parse(fsReport([{ ...empty, Vulnerabilities: null }, empty, nodeResult()])).findings).toHaveLength(1);
    expect(parse(fsReport([{ ...empty, Vulnerabilities: null }])).findings).toEqual([]);
    expect(parse(fsReport([])).findings).toEqual([]);
    expect(parse(fsReport(undefined, { Results: undefined })).findings).toEqual([]);
    expect(parse(fsReport(undefined, { Results: null })).findings).toEqual([]);
  });
});

describe("trivyReport.parse — fingerprints", () => {
  const fingerprints = (document: Json) => parse(document).findings.map((f) => f.fingerprint);

  it("are the same for two parses, and for a later scan with a newer Trivy", () => {
    const first = fingerprints(imageReport());
    expect(fingerprints(imageReport())).toEqual(first);
    const later = imageReport(undefined, { CreatedAt: "2024-06-01T08:00:00Z", Trivy: { Version: "0.53.0" } });
    expect(fingerprints(later)).toEqual(first);
  });

  it("do not change when the vulnerability is re-rated or re-worded", () => {
    const before = fingerprints(imageReport([osResult()]));
    const after = fingerprints(
      imageReport([
        osResult([
          osVulnerability({
            Severity: "CRITICAL",
            CVSS: { nvd: { V3Score: 9.1 } },
            Title: "reworded",
            CweIDs: ["CWE-20"],
            FixedVersion: "3.0.14",
          }),
        ]),
      ]),
    );
    expect(after).toEqual(before);
  });

  it("do not depend on the order of results or vulnerabilities", () => {
    const a = npmVulnerability({ VulnerabilityID: "CVE-2024-31001" });
    const b = npmVulnerability({ VulnerabilityID: "CVE-2024-31002" });
    const forward = fingerprints(imageReport([osResult(), nodeResult([a, b])]));
    const backward = fingerprints(imageReport([nodeResult([b, a]), osResult()]));
    expect(new Set(backward)).toEqual(new Set(forward));
    expect(backward).toEqual([forward[2], forward[1], forward[0]]);
  });

  it("differ when the id, the package, its version or the target differ", () => {
    const make = (vulnerability: Json, target = NODE_TARGET) =>
      fingerprints(imageReport([nodeResult([vulnerability], target)]))[0];
    const all = [
      make(npmVulnerability()),
      make(npmVulnerability({ VulnerabilityID: "CVE-2024-31009" })),
      make(npmVulnerability({ PkgName: "other-kit", PkgIdentifier: { PURL: "pkg:npm/other-kit@4.1.0" } })),
      make(npmVulnerability({ InstalledVersion: "4.1.1", PkgIdentifier: { PURL: "pkg:npm/template-kit@4.1.1" } })),
      make(npmVulnerability(), "usr/src/admin/package-lock.json"),
    ];
    expect(all.every((f) => typeof f === "string" && f.length > 0)).toBe(true);
    expect(new Set(all).size).toBe(all.length);
  });

  it("differ for the same vulnerability in two targets, giving two findings", () => {
    const findings = parse(
      imageReport([
        nodeResult([npmVulnerability()], "usr/src/app"),
        nodeResult([npmVulnerability()], "usr/src/worker"),
      ]),
    ).findings;
    expect(findings).toHaveLength(2);
    expect(findings[0]!.fingerprint).not.toBe(findings[1]!.fingerprint);
  });
});

describe("trivyReport.parse — invalid documents", () => {
  it("rejects an unknown Severity at its JSON Pointer", () => {
    expect(pathsOf(imageReport([osResult([osVulnerability({ Severity: "SEVERE" })])]))).toContain(
      "/Results/0/Vulnerabilities/0/Severity",
    );
  });

  it("points at the right result and vulnerability", () => {
    const paths = pathsOf(
      imageReport([osResult(), nodeResult([npmVulnerability(), npmVulnerability({ Severity: "low" })])]),
    );
    expect(paths).toEqual(["/Results/1/Vulnerabilities/1/Severity"]);
  });

  it.each(["PkgName", "VulnerabilityID", "Severity"])("rejects a vulnerability without %s", (field) => {
    const paths = pathsOf(imageReport([osResult([osVulnerability({ [field]: undefined })])]));
    expect(paths).toHaveLength(1);
    expect(paths[0]!.endsWith(`/${field}`)).toBe(true);
    expect(paths[0]).toBe(`/Results/0/Vulnerabilities/0/${field}`);
  });

  it.each<[string, (d: Json) => void, string]>([
    ["SchemaVersion 1", (d) => (d["SchemaVersion"] = 1), "/SchemaVersion"],
    ["SchemaVersion as text", (d) => (d["SchemaVersion"] = "2"), "/SchemaVersion"],
    ["Results that are not an array", (d) => (d["Results"] = { Target: "x" }), "/Results"],
    ["a result without a Target", (d) => delete (d["Results"] as Json[])[0]!["Target"], "/Results/0/Target"],
    [
      "Vulnerabilities that are not an array",
      (d) => ((d["Results"] as Json[])[1]!["Vulnerabilities"] = "none"),
      "/Results/1/Vulnerabilities",
    ],
    [
      "an empty VulnerabilityID",
      (d) => (((d["Results"] as Json[])[0]!["Vulnerabilities"] as Json[])[0]!["VulnerabilityID"] = ""),
      "/Results/0/Vulnerabilities/0/VulnerabilityID",
    ],
    [
      "a V3Score that is text",
      (d) => (((d["Results"] as Json[])[0]!["Vulnerabilities"] as Json[])[0]!["CVSS"] = { nvd: { V3Score: "7.5" } }),
      "/Results/0/Vulnerabilities/0/CVSS/nvd/V3Score",
    ],
    [
      "CweIDs that are numbers",
      (d) => (((d["Results"] as Json[])[0]!["Vulnerabilities"] as Json[])[0]!["CweIDs"] = [79]),
      "/Results/0/Vulnerabilities/0/CweIDs/0",
    ],
  ])("rejects %s", (_what, spoil, path) => {
    const document = imageReport();
    spoil(document);
    const errors = invalidErrorsOf(document);
    expect(errors.map((e) => e.path)).toContain(path);
    expect(errors.every((e) => typeof e.message === "string" && e.message.length > 0)).toBe(true);
  });

  it.each<[string, unknown]>([
    ["null", null],
    ["an array", []],
    ["a CycloneDX BOM", { bomFormat: "CycloneDX", specVersion: "1.6" }],
  ])("rejects %s", (_what, document) => {
    expect(invalidErrorsOf(document).length).toBeGreaterThan(0);
  });
});
