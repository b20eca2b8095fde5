// The CycloneDX report parser (docs/spec/CONTRACT.md §11) against BOMs written here, in the shape the CycloneDX
// JSON schemas 1.4 and 1.6 give (the parser validates them against those schemas first).
import { randomUUID } from "node:crypto";
import type { Finding } from "../../../src/domain/vulnerabilities/finding.ts";
import { cyclonedxReport } from "../../../src/scans/reports/cyclonedx-report.ts";
import type { ParsedReport } from "../../../src/scans/reports/report.ts";
import { trivyReport } from "../../../src/scans/reports/trivy-report.ts";
import { hasLoneSurrogate, invalidErrors, invalidPaths, onlyFinding } from "../../helpers/report-parsing.ts";

type Json = Record<string, unknown>;
/** What a JSON file holds: keys set to undefined (to leave a field out) disappear. */
const asJson = (value: Json): Json => JSON.parse(JSON.stringify(value)) as Json;

// Written out here rather than imported, so a wrong band in the code fails these tests.
const BAND_FLOOR = { critical: 9.0, high: 7.0, medium: 4.0, low: 0.1 } as const;

// ---- BOM builders ---------------------------------------------------------------------------

const NVD = { name: "NVD", url: "https://nvd.nist.gov/" };
const GHSA = { name: "GitHub Advisories", url: "https://github.com/advisories" };

/** A library component; bom-ref defaults to its purl, as several generators write it. */
function library(name: string, version: string, purl: string, extra: Json = {}): Json {
  return { "bom-ref": purl, type: "library", name, version, purl, ...extra };
}

const TEMPLATE_KIT = library("template-kit", "4.1.0", "pkg:npm/template-kit@4.1.0");
const HTTP_KIT = library("http-kit", "2.3.1", "pkg:npm/%40acme/http-kit@2.3.1", { group: "@acme" });
const LOG_CORE = library("log-core", "2.14.1", "pkg:maven/org.example.logging/log-core@2.14.1", {
  group: "org.example.logging",
});

/** A vulnerability shaped as a scanner writes one: id, source, an alias, two ratings, CWEs, texts, affects, analysis. */
function vulnerability(overrides: Json = {}): Json {
  return asJson({
    "bom-ref": `vuln-${randomUUID()}`,
    id: "CVE-2024-31001",
    source: { name: NVD.name, url: "https://nvd.nist.gov/vuln/detail/CVE-2024-31001" },
    references: [
      {
        id: "GHSA-7wq3-9cxp-2m4f",
        source: { name: GHSA.name, url: "https://github.com/advisories/GHSA-7wq3-9cxp-2m4f" },
      },
    ],
    ratings: [
      {
        source: NVD,
        score: 7.2,
        severity: "high",
        method: "CVSSv31",
        vector: "CVSS:3.1/AV:N/AC:L/PR:H/UI:N/S:U/C:H/I:H/A:H",
      },
      { source: GHSA, severity: "medium", method: "other" },
    ],
    cwes: [94, 77],
    description: "Template compilation allows code injection.",
    detail:
      "template-kit compiles user-supplied templates with the Function constructor, so a crafted variable name runs arbitrary code.",
    recommendation: "Upgrade template-kit to 4.1.2 or later.",
    affects: [{ ref: TEMPLATE_KIT["bom-ref"] }],
    analysis: { state: "exploitable" },
    ...overrides,
  });
}

interface BomParts {
  subject?: Json;
  components?: Json[];
  vulnerabilities?: Json[];
  tools?: unknown;
  serialNumber?: string;
}

const APP_SUBJECT: Json = { "bom-ref": "root-app", type: "application", name: "payments-api", version: "3.2.0" };
const IMAGE_SUBJECT: Json = {
  "bom-ref": "root-image",
  type: "container",
  name: "registry.example.com/payments-api",
  version: "sha256:4f1c0b9e",
};

/** A CycloneDX 1.4 BOM: metadata.tools is an array of tools. */
function bom14(parts: BomParts = {}): Json {
  return asJson({
    bomFormat: "CycloneDX",
    specVersion: "1.4",
    serialNumber: parts.serialNumber ?? `urn:uuid:${randomUUID()}`,
    version: 1,
    metadata: {
      timestamp: "2024-05-02T10:15:00Z",
      tools: parts.tools ?? [{ vendor: "Example Security", name: "dep-scanner", version: "5.4.1" }],
      component: parts.subject ?? APP_SUBJECT,
    },
    components: parts.components ?? [TEMPLATE_KIT, HTTP_KIT, LOG_CORE],
    vulnerabilities: parts.vulnerabilities ?? [vulnerability()],
  });
}

/** A CycloneDX 1.6 BOM: metadata.tools is {components: [...]}. */
function bom16(parts: BomParts = {}): Json {
  return asJson({
    ...bom14(parts),
    specVersion: "1.6",
    metadata: {
      timestamp: "2024-05-02T10:15:00Z",
      tools: parts.tools ?? {
        components: [
          { type: "library", name: "cyclonedx-core-lib", version: "0.9.0" },
          { type: "application", group: "example", name: "image-auditor", version: "0.52.2" },
        ],
      },
      component: parts.subject ?? IMAGE_SUBJECT,
    },
  });
}

const parse = (document: unknown): ParsedReport => cyclonedxReport.parse(document);
const only = (report: ParsedReport): Finding => onlyFinding(report.findings);

const invalidErrorsOf = (document: unknown) => invalidErrors(parse, document);
const pathsOf = (document: unknown) => invalidPaths(parse, document);

// ---- tests ----------------------------------------------------------------------------------

describe("cyclonedxReport.detect", () => {
  it("recognises 1.4 and 1.6 BOMs", () => {
    expect(cyclonedxReport.detect(bom14())).toBe(true);
    expect(cyclonedxReport.detect(bom16())).toBe(true);
  });

  it.each<[string, unknown]>([
    [
      "a Trivy JSON report",
      { SchemaVersion: 2, ArtifactName: "alpine:3.19", ArtifactType: "container_image", Results: [] },
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
    ["an SPDX document", { spdxVersion: "SPDX-2.3", SPDXID: "SPDXRef-DOCUMENT", packages: [] }],
    ["null", null],
    ["an array of BOMs", [{ bomFormat: "CycloneDX", specVersion: "1.4" }]],
    ["a string", "CycloneDX"],
  ])("rejects %s", (_what, document) => {
    expect(cyclonedxReport.detect(document)).toBe(false);
  });

  it("is not mistaken for Trivy by the Trivy parser", () => {
    expect(trivyReport.detect(bom14())).toBe(false);
    expect(trivyReport.detect(bom16())).toBe(false);
  });
});

describe("cyclonedxReport.parse — a 1.4 BOM", () => {
  const report = parse(bom14());
  const finding = only(report);

  it("names the format, the tool from metadata.tools and the sca scan type of an application", () => {
    expect(report.format).toBe("cyclonedx");
    expect(report.tool).toBe("dep-scanner");
    expect(report.toolVersion).toBe("5.4.1");
    expect(report.scanType).toBe("sca");
  });

  it("maps every field of the finding", () => {
    expect(finding.fingerprint).toMatch(/^\S+$/);
    expect(finding.title).toContain("CVE-2024-31001");
    expect(finding.title).toContain("template-kit@4.1.0");
    expect(finding.description).toBe(vulnerability()["detail"]);
    // The highest rating wins: high (NVD, CVSS 3.1) over medium (GHSA, other).
    expect(finding.severity).toBe("high");
    // The lowest of cwes [94, 77].
    expect(finding.cwe).toBe("CWE-77");
    expect(finding.cve).toBe("CVE-2024-31001");
    expect(finding.cvssScore).toBe(7.2);
    expect(finding.introducedIn).toBe("template-kit@4.1.0");
    expect(finding.remediation).toBe("Upgrade template-kit to 4.1.2 or later.");
    expect(finding.packageName).toBe("template-kit");
    expect(finding.packageVersion).toBe("4.1.0");
    expect(finding.location).toBe("pkg:npm/template-kit@4.1.0");
  });

  it("gives the same findings when the same BOM is parsed twice", () => {
    const document = bom14();
    expect(parse(document)).toEqual(parse(structuredClone(document)));
  });
});

describe("cyclonedxReport.parse — a 1.6 BOM of a container image", () => {
  const vulnerabilities = [
    vulnerability({ id: "CVE-2024-31001", affects: [{ ref: TEMPLATE_KIT["bom-ref"] }] }),
    vulnerability({
      id: "GHSA-4r6h-8v6p-xvw6",
      references: [
        { id: "CVE-2023-45857", source: { name: NVD.name, url: "https://nvd.nist.gov/vuln/detail/CVE-2023-45857" } },
      ],
      ratings: [
        {
          source: GHSA,
          score: 6.5,
          severity: "medium",
          method: "CVSSv31",
          vector: "CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:U/C:H/I:N/A:N",
        },
      ],
      cwes: [352],
      description: "Cross-site request forgery token is sent to any host.",
      detail: undefined,
      recommendation: undefined,
      workaround: "Set withCredentials to false for cross-origin requests.",
      affects: [{ ref: HTTP_KIT["bom-ref"] }],
      analysis: { state: "in_triage" },
    }),
    vulnerability({
      id: "CVE-2021-44999",
      references: [],
      ratings: [
        {
          source: NVD,
          score: 10,
          severity: "critical",
          method: "CVSSv31",
          vector: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H",
        },
      ],
      cwes: [917, 502, 20],
      detail: "Lookup strings in logged messages are evaluated.",
      recommendation: "Upgrade log-core to 2.17.1.",
      affects: [{ ref: LOG_CORE["bom-ref"] }],
      analysis: undefined,
    }),
  ];
  const report = parse(bom16({ vulnerabilities }));

  it("takes the tool that is not a library from tools.components, and container as the scan type", () => {
    expect(report.format).toBe("cyclonedx");
    expect(report.tool).toBe("image-auditor");
    expect(report.toolVersion).toBe("0.52.2");
    expect(report.scanType).toBe("container");
  });

  it("makes one finding per vulnerability, each mapped field by field", () => {
    expect(report.findings).toHaveLength(3);
    const [first, second, third] = report.findings as [Finding, Finding, Finding];

    expect(first).toMatchObject({
      severity: "high",
      cvssScore: 7.2,
      cwe: "CWE-77",
      cve: "CVE-2024-31001",
      packageName: "template-kit",
    });

    expect(second.title).toContain("GHSA-4r6h-8v6p-xvw6");
    expect(second.title).toContain("@acme/http-kit@2.3.1");
    expect(second.description).toBe("Cross-site request forgery token is sent to any host.");
    expect(second.severity).toBe("medium");
    expect(second.cwe).toBe("CWE-352");
    // Not in the id: the CVE comes from the references (aliases).
    expect(second.cve).toBe("CVE-2023-45857");
    expect(second.cvssScore).toBe(6.5);
    expect(second.introducedIn).toBe("@acme/http-kit@2.3.1");
    expect(second.remediation).toBe("Set withCredentials to false for cross-origin requests.");
    expect(second.packageName).toBe("@acme/http-kit");
    expect(second.packageVersion).toBe("2.3.1");
    expect(second.location).toBe("pkg:npm/%40acme/http-kit@2.3.1");

    expect(third.title).toContain("CVE-2021-44999");
    expect(third.description).toBe("Lookup strings in logged messages are evaluated.");
    expect(third.severity).toBe("critical");
    expect(third.cwe).toBe("CWE-20");
    expect(third.cve).toBe("CVE-2021-44999");
    expect(third.cvssScore).toBe(10);
    expect(third.introducedIn).toBe("org.example.logging:log-core@2.14.1");
    expect(third.remediation).toBe("Upgrade log-core to 2.17.1.");
    expect(third.packageName).toBe("org.example.logging:log-core");
    expect(third.packageVersion).toBe("2.14.1");
    expect(third.location).toBe("pkg:maven/org.example.logging/log-core@2.14.1");
  });

  it("gives each finding its own fingerprint", () => {
    expect(new Set(report.findings.map((f) => f.fingerprint)).size).toBe(3);
  });

  it("prefers the tool each vulnerability names (1.5+) over the BOM's tools", () => {
    const named = vulnerability({
      tools: { components: [{ type: "application", name: "vuln-matcher", version: "1.8.0" }] },
    });
    const parsed = parse(bom16({ vulnerabilities: [named] }));
    expect(parsed.tool).toBe("vuln-matcher");
    expect(parsed.toolVersion).toBe("1.8.0");
  });

  it("names no tool version when the BOM names no tool", () => {
    const document = bom16();
    delete (document["metadata"] as Json)["tools"];
    const parsed = parse(document);
    expect(parsed.toolVersion).toBeNull();
    expect(parsed.tool.length).toBeGreaterThan(0);
  });
});

describe("cyclonedxReport.parse — severity and score", () => {
  const rated = (ratings: unknown[] | undefined, extra: Json = {}) =>
    parse(bom14({ vulnerabilities: [vulnerability({ ratings, ...extra })] })).findings;

  it.each<[string, unknown[] | undefined, keyof typeof BAND_FLOOR, number]>([
    [
      "critical with a CVSS 3.1 score",
      [{ source: NVD, score: 9.8, severity: "critical", method: "CVSSv31" }],
      "critical",
      9.8,
    ],
    ["a CVSS 3.0 score", [{ source: NVD, score: 8.1, severity: "high", method: "CVSSv3" }], "high", 8.1],
    ["a score alone, by its CVSS band", [{ source: NVD, score: 5.3, method: "CVSSv31" }], "medium", 5.3],
    [
      "a score rounded to one decimal",
      [{ source: NVD, score: 8.14, severity: "high", method: "CVSSv31" }],
      "high",
      8.1,
    ],
    ["low, no score", [{ severity: "low", method: "other" }], "low", BAND_FLOOR.low],
    ["medium, no score", [{ severity: "medium", method: "other" }], "medium", BAND_FLOOR.medium],
    ["high from OWASP, no CVSS", [{ severity: "high", method: "OWASP", score: 7.9 }], "high", BAND_FLOOR.high],
    ["critical, no score", [{ severity: "critical", method: "other" }], "critical", BAND_FLOOR.critical],
    ["unknown → low", [{ severity: "unknown" }], "low", BAND_FLOOR.low],
    [
      "the highest of several",
      [{ severity: "low", method: "other" }, { severity: "critical", method: "other" }, { severity: "medium" }],
      "critical",
      BAND_FLOOR.critical,
    ],
    [
      "a CVSS v2 score is not a v3 score",
      [{ source: NVD, score: 10, severity: "high", method: "CVSSv2" }],
      "high",
      BAND_FLOOR.high,
    ],
    ["no ratings at all → low", undefined, "low", BAND_FLOOR.low],
  ])("%s", (_what, ratings, severity, score) => {
    const [finding] = rated(ratings);
    expect(finding?.severity).toBe(severity);
    expect(finding?.cvssScore).toBe(score);
  });

  it("takes the CVSS v3 score of the highest rating when sources disagree", () => {
    const [finding] = rated([
      { source: GHSA, score: 5.3, severity: "medium", method: "CVSSv31" },
      { source: NVD, score: 7.5, severity: "high", method: "CVSSv31" },
    ]);
    expect(finding?.severity).toBe("high");
    expect(finding?.cvssScore).toBe(7.5);
  });

  it.each(["info", "none"])("keeps %s as low when the vulnerability has a CVE id", (severity) => {
    const [finding] = rated([{ severity, method: "other" }]);
    expect(finding?.severity).toBe("low");
    expect(finding?.cvssScore).toBe(BAND_FLOOR.low);
    expect(finding?.cve).toBe("CVE-2024-31001");
  });

  it.each(["info", "none"])("keeps %s as low when only an alias is a CVE", (severity) => {
    const findings = rated([{ severity, method: "other" }], {
      id: "GHSA-c2qf-rxjj-qqgw",
      references: [{ id: "CVE-2022-25883", source: NVD }],
    });
    expect(findings).toHaveLength(1);
    expect(findings[0]?.severity).toBe("low");
    expect(findings[0]?.cve).toBe("CVE-2022-25883");
  });

  it.each(["info", "none"])("skips %s without any CVE", (severity) => {
    const findings = rated([{ severity, method: "other" }], {
      id: "GHSA-c2qf-rxjj-qqgw",
      references: [{ id: "OSV-2022-0042", source: { name: "OSV" } }],
    });
    expect(findings).toEqual([]);
  });

  it("does not let an info rating lower a real one", () => {
    const [finding] = rated(
      [
        { severity: "info", method: "other" },
        { severity: "medium", method: "other" },
      ],
      { id: "GHSA-c2qf-rxjj-qqgw", references: [] },
    );
    expect(finding?.severity).toBe("medium");
  });
});

describe("cyclonedxReport.parse — CWE, CVE, texts", () => {
  const one = (extra: Json) => only(parse(bom14({ vulnerabilities: [vulnerability(extra)] })));

  it.each<[number[] | undefined, string]>([
    [[89], "CWE-89"],
    [[502, 20, 400], "CWE-20"],
    [[], "CWE-0"],
    [undefined, "CWE-0"],
  ])("cwes %p → %s", (cwes, cwe) => {
    expect(one({ cwes }).cwe).toBe(cwe);
  });

  it("has no CVE when neither the id nor a reference is one", () => {
    const finding = one({ id: "GHSA-9h3m-2p6q-7vwx", references: [{ id: "GHSA-aaaa-bbbb-cccc", source: GHSA }] });
    expect(finding.cve).toBeNull();
    expect(finding.title).toContain("GHSA-9h3m-2p6q-7vwx");
  });

  it("falls back to the description, then the id, for the text", () => {
    expect(one({ detail: undefined }).description).toBe("Template compilation allows code injection.");
    expect(one({ detail: undefined, description: undefined }).description).toContain("CVE-2024-31001");
  });

  it("writes a remediation naming the package and the id when the BOM gives none", () => {
    const finding = one({ recommendation: undefined });
    expect(finding.remediation).toContain("template-kit");
    expect(finding.remediation).toContain("CVE-2024-31001");
  });

  it("keeps unicode text intact", () => {
    const detail = "Überlauf im Parser — «日本語» テキスト, emoji 💥🔥, RTL שלום, combining é.";
    const recommendation = "Mettre à jour vers 4.1.2 ✅";
    const finding = one({ detail, recommendation });
    expect(finding.description).toBe(detail);
    expect(finding.remediation).toBe(recommendation);
  });

  it("clips a 100,000-character description to at most 20,000 characters", () => {
    const detail = `Start of a long advisory. ${"x".repeat(100_000)}`;
    const finding = one({ detail });
    expect(finding.description.length).toBeLessThanOrEqual(20_000);
    expect(finding.description.length).toBeGreaterThan(19_000);
    expect(finding.description.startsWith("Start of a long advisory. xxx")).toBe(true);
  });

  it("never cuts a surrogate pair in half when clipping", () => {
    for (const pad of [19_996, 19_997, 19_998, 19_999]) {
      const detail = `${"a".repeat(pad)}${"😀".repeat(100)}`;
      const finding = one({ detail });
      expect(finding.description.length).toBeLessThanOrEqual(20_000);
      expect(hasLoneSurrogate(finding.description)).toBe(false);
    }
  });

  it("clips a very long title", () => {
    const long = library("n".repeat(1_000), "1.0.0", "pkg:npm/long-name@1.0.0");
    const finding = only(
      parse(bom14({ components: [long], vulnerabilities: [vulnerability({ affects: [{ ref: long["bom-ref"] }] })] })),
    );
    expect(finding.title.length).toBeLessThanOrEqual(300);
    expect(finding.title).toContain("CVE-2024-31001");
  });
});

describe("cyclonedxReport.parse — VEX analysis (docs/spec/CONTRACT.md §13)", () => {
  it.each(["not_affected", "false_positive", "exploitable", "in_triage", "resolved", "resolved_with_pedigree"])(
    "keeps a vulnerability whose analysis state is %s, with its analysis",
    (state) => {
      const analysis = {
        state,
        justification: "code_not_reachable",
        response: ["will_not_fix", "update"],
        detail: "The parser is never given input",
      };
      const vulnerabilities = [
        vulnerability({ id: "CVE-2024-31001", analysis }),
        vulnerability({ id: "CVE-2024-31002", analysis: undefined }),
      ];
      const findings = parse(bom16({ vulnerabilities: JSON.parse(JSON.stringify(vulnerabilities)) })).findings;
      expect(findings.map((f) => [f.cve, f.analysis])).toEqual([
        [
          "CVE-2024-31001",
          {
            state,
            justification: "code_not_reachable",
            response: ["will_not_fix", "update"],
            detail: "The parser is never given input",
          },
        ],
        ["CVE-2024-31002", null],
      ]);
    },
  );

  it("gives the vulnerability's id and its references' ids as the finding's aliases, canonical", () => {
    const v = vulnerability({
      id: "GHSA-JFH8-C2JP-5V3Q",
      references: [{ id: "cve-2021-44228", source: { name: "NVD" } }],
    });
    const [finding] = parse(bom16({ vulnerabilities: [v] })).findings;
    expect(finding!.aliases).toEqual(["GHSA-jfh8-c2jp-5v3q", "CVE-2021-44228"]);
    expect(finding!.cve).toBe("CVE-2021-44228");
  });
});

describe("cyclonedxReport.parse — affected components", () => {
  it("makes one finding per affected component", () => {
    const shared = vulnerability({ affects: [{ ref: TEMPLATE_KIT["bom-ref"] }, { ref: HTTP_KIT["bom-ref"] }] });
    const findings = parse(bom14({ vulnerabilities: [shared] })).findings;
    expect(findings).toHaveLength(2);
    expect(findings.map((f) => [f.packageName, f.packageVersion, f.location])).toEqual([
      ["template-kit", "4.1.0", "pkg:npm/template-kit@4.1.0"],
      ["@acme/http-kit", "2.3.1", "pkg:npm/%40acme/http-kit@2.3.1"],
    ]);
    expect(findings.map((f) => f.introducedIn)).toEqual(["template-kit@4.1.0", "@acme/http-kit@2.3.1"]);
    expect(findings.every((f) => f.cve === "CVE-2024-31001" && f.severity === "high")).toBe(true);
    expect(findings[0]!.fingerprint).not.toBe(findings[1]!.fingerprint);
  });

  it("reads an affects ref that is a package URL no component declares", () => {
    const purl = "pkg:npm/%40acme/string-utils@0.9.4";
    const finding = only(parse(bom14({ vulnerabilities: [vulnerability({ affects: [{ ref: purl }] })] })));
    expect(finding.packageName).toBe("@acme/string-utils");
    expect(finding.packageVersion).toBe("0.9.4");
    expect(finding.location).toBe(purl);
    expect(finding.introducedIn).toBe("@acme/string-utils@0.9.4");
    expect(finding.title).toContain("@acme/string-utils@0.9.4");
  });

  it("names an operating-system package by its own name, not its distribution's namespace", () => {
    const libssl = library(
      "libssl3",
      "3.0.11-1~deb12u2",
      "pkg:deb/debian/libssl3@3.0.11-1~deb12u2?arch=amd64&distro=debian-12.4",
    );
    const busybox = "pkg:apk/alpine/busybox@1.36.1-r15?arch=x86_64&distro=3.19.1";
    const vulnerabilities = [vulnerability({ affects: [{ ref: libssl["bom-ref"] }, { ref: busybox }] })];
    const findings = parse(bom16({ components: [libssl], vulnerabilities })).findings;
    expect(findings.map((f) => [f.packageName, f.packageVersion, f.introducedIn, f.location])).toEqual([
      ["libssl3", "3.0.11-1~deb12u2", "libssl3@3.0.11-1~deb12u2", libssl["purl"]],
      ["busybox", "1.36.1-r15", "busybox@1.36.1-r15", busybox],
    ]);
  });

  it("finds nested components, and names one without a purl by group, name and version", () => {
    const deep: Json = {
      "bom-ref": "deep-ref-7",
      type: "library",
      group: "org.example",
      name: "xml-reader",
      version: "1.0.3",
    };
    const nested = library("framework-x", "6.0.0", "pkg:maven/org.example/framework-x@6.0.0", {
      components: [library("router", "6.0.0", "pkg:maven/org.example/router@6.0.0", { components: [deep] })],
    });
    const vulnerabilities = [
      vulnerability({ affects: [{ ref: "deep-ref-7" }, { ref: "pkg:maven/org.example/router@6.0.0" }] }),
    ];
    const findings = parse(bom14({ components: [nested], vulnerabilities })).findings;
    expect(findings).toHaveLength(2);
    expect(findings[0]).toMatchObject({
      packageName: "org.example/xml-reader",
      packageVersion: "1.0.3",
      introducedIn: "org.example/xml-reader@1.0.3",
      location: "org.example/xml-reader@1.0.3",
    });
    expect(findings[1]).toMatchObject({
      packageName: "org.example:router",
      packageVersion: "6.0.0",
      location: "pkg:maven/org.example/router@6.0.0",
    });
  });

  it("locates a vulnerability that affects nothing at the BOM's subject", () => {
    const finding = only(parse(bom14({ vulnerabilities: [vulnerability({ affects: undefined })] })));
    expect(finding.packageName).toBeNull();
    expect(finding.packageVersion).toBeNull();
    expect(finding.location).toBe("payments-api@3.2.0");
    expect(finding.introducedIn).toBe("payments-api@3.2.0");
    expect(finding.cve).toBe("CVE-2024-31001");
  });
});

describe("cyclonedxReport.parse — fingerprints", () => {
  const fingerprints = (document: Json) => parse(document).findings.map((f) => f.fingerprint);
  const base = () => bom14({ vulnerabilities: [vulnerability()] });

  it("are the same for two parses, and for another run of the scanner (new serial number, timestamp, bom-refs)", () => {
    const first = fingerprints(base());
    expect(fingerprints(base())).toEqual(first);
    const rerun = bom14({
      serialNumber: `urn:uuid:${randomUUID()}`,
      components: [{ ...TEMPLATE_KIT, "bom-ref": "c1a7e0f4-second-run" }],
      vulnerabilities: [vulnerability({ affects: [{ ref: "c1a7e0f4-second-run" }] })],
    });
    (rerun["metadata"] as Json)["timestamp"] = "2024-06-01T08:00:00Z";
    expect(fingerprints(rerun)).toEqual(first);
  });

  it("do not change when a re-rated or re-worded vulnerability is reported again", () => {
    const reworded = bom14({
      vulnerabilities: [
        vulnerability({ ratings: [{ severity: "critical", method: "other" }], detail: "Reworded.", cwes: [20] }),
      ],
    });
    expect(fingerprints(reworded)).toEqual(fingerprints(base()));
  });

  it("do not depend on the order of the vulnerabilities", () => {
    const a = vulnerability({ id: "CVE-2024-31001" });
    const b = vulnerability({ id: "CVE-2024-31002" });
    const forward = fingerprints(bom14({ vulnerabilities: [a, b] }));
    const backward = fingerprints(bom14({ vulnerabilities: [b, a] }));
    expect(backward).toEqual([forward[1], forward[0]]);
  });

  it("differ when the id, the package, its version or the target differ", () => {
    const [original] = fingerprints(base());
    const otherId = fingerprints(bom14({ vulnerabilities: [vulnerability({ id: "CVE-2024-31009" })] }))[0];
    const otherPackage = fingerprints(
      bom14({ vulnerabilities: [vulnerability({ affects: [{ ref: HTTP_KIT["bom-ref"] }] })] }),
    )[0];
    const newer = library("template-kit", "4.1.1", "pkg:npm/template-kit@4.1.1");
    const otherVersion = fingerprints(
      bom14({ components: [newer], vulnerabilities: [vulnerability({ affects: [{ ref: newer["bom-ref"] }] })] }),
    )[0];
    const otherTarget = fingerprints(
      bom14({ subject: { ...APP_SUBJECT, name: "billing-api" }, vulnerabilities: [vulnerability()] }),
    )[0];
    const all = [original, otherId, otherPackage, otherVersion, otherTarget];
    expect(all.every((f) => typeof f === "string" && f.length > 0)).toBe(true);
    expect(new Set(all).size).toBe(all.length);
  });
});

describe("cyclonedxReport.parse — invalid documents", () => {
  const withVulnerability = (make: (d: Json) => Json) => (extra: Json) =>
    make({ vulnerabilities: [vulnerability(extra)] });

  it.each([
    ["1.4", withVulnerability(bom14)],
    ["1.6", withVulnerability(bom16)],
  ])("rejects an unknown rating severity (%s) at its JSON Pointer", (_version, make) => {
    const document = make({ ratings: [{ source: NVD, severity: "catastrophic", method: "other" }] });
    expect(pathsOf(document)).toContain("/vulnerabilities/0/ratings/0/severity");
  });

  it("points at the right vulnerability and rating", () => {
    const document = bom14({
      vulnerabilities: [
        vulnerability(),
        vulnerability({ ratings: [{ severity: "high" }, { severity: "medium" }, { severity: "severe" }] }),
      ],
    });
    const paths = pathsOf(document);
    expect(paths).toContain("/vulnerabilities/1/ratings/2/severity");
    expect(paths).not.toContain("/vulnerabilities/0/ratings/0/severity");
  });

  it.each<[string, unknown]>([
    ["1.3", "1.3"],
    ["1.7", "1.7"],
    ["2.0", "2.0"],
    ["the number 1.4", 1.4],
    ["nothing", undefined],
  ])("rejects specVersion %s at /specVersion", (_what, specVersion) => {
    const document = bom14();
    document["specVersion"] = specVersion;
    expect(pathsOf(document)).toEqual(["/specVersion"]);
  });

  it.each<[string, unknown]>([
    ["null", null],
    ["an array", []],
    ["a string", "{}"],
  ])("rejects %s", (_what, document) => {
    expect(invalidErrorsOf(document).length).toBeGreaterThan(0);
  });

  it.each<[string, (d: Json) => void, string]>([
    [
      "an analysis state outside the enum",
      (d) => ((d["vulnerabilities"] as Json[])[0]!["analysis"] = { state: "wont_fix" }),
      "/vulnerabilities/0/analysis/state",
    ],
    [
      "a CWE that is not a number",
      (d) => ((d["vulnerabilities"] as Json[])[0]!["cwes"] = ["CWE-79"]),
      "/vulnerabilities/0/cwes/0",
    ],
    [
      "a score that is not a number",
      (d) => ((d["vulnerabilities"] as Json[])[0]!["ratings"] = [{ score: "9.8", method: "CVSSv31" }]),
      "/vulnerabilities/0/ratings/0/score",
    ],
    [
      "a scoring method outside the enum",
      (d) => ((d["vulnerabilities"] as Json[])[0]!["ratings"] = [{ severity: "high", method: "CVSSv9" }]),
      "/vulnerabilities/0/ratings/0/method",
    ],
    [
      "an unknown property",
      (d) => ((d["vulnerabilities"] as Json[])[0]!["exploitability"] = "high"),
      "/vulnerabilities/0/exploitability",
    ],
    ["a component without a name", (d) => delete (d["components"] as Json[])[1]!["name"], "/components/1/name"],
    [
      "a component type outside the enum",
      (d) => ((d["components"] as Json[])[0]!["type"] = "gem"),
      "/components/0/type",
    ],
    [
      "a reference without a source",
      (d) => ((d["vulnerabilities"] as Json[])[0]!["references"] = [{ id: "GHSA-7wq3-9cxp-2m4f" }]),
      "/vulnerabilities/0/references/0/source",
    ],
    ["a malformed serial number", (d) => (d["serialNumber"] = "1234"), "/serialNumber"],
    ["another bomFormat", (d) => (d["bomFormat"] = "SPDX"), "/bomFormat"],
  ])("rejects %s", (_what, spoil, path) => {
    const document = bom14({ vulnerabilities: [vulnerability()] });
    spoil(document);
    const errors = invalidErrorsOf(document);
    expect(errors.map((e) => e.path)).toContain(path);
    expect(errors.every((e) => e.path === "" || e.path.startsWith("/"))).toBe(true);
    expect(errors.every((e) => typeof e.message === "string" && e.message.length > 0)).toBe(true);
  });

  it("rejects 1.6-style tools in a 1.4 BOM", () => {
    const document = bom14({ tools: { components: [{ type: "application", name: "image-auditor" }] } });
    expect(pathsOf(document).some((p) => p.startsWith("/metadata/tools"))).toBe(true);
  });

  it("accepts a BOM with no vulnerabilities, giving no findings", () => {
    const document = bom16();
    delete document["vulnerabilities"];
    expect(parse(document).findings).toEqual([]);
  });
});

describe("cyclonedxReport.parse — long arrays", () => {
  it("refuses a repeated vulnerability or component by its JSON Pointer (checked in one pass, not by ajv's pairwise uniqueItems)", () => {
    const many = Array.from({ length: 2_000 }, (_, i) =>
      vulnerability({ "bom-ref": `v-${i}`, id: `CVE-2024-${40_000 + i}` }),
    );
    expect(parse(bom16({ vulnerabilities: many })).findings).toHaveLength(2_000);
    const repeated = vulnerability({ "bom-ref": "twice" });
    expect(invalidErrors(parse, bom16({ vulnerabilities: [repeated, vulnerability(), repeated] }))).toEqual([
      { path: "/vulnerabilities/2", message: "Repeats item 0: the items must be unique" },
    ]);
    expect(invalidPaths(parse, bom16({ components: [TEMPLATE_KIT, TEMPLATE_KIT], vulnerabilities: [] }))).toEqual([
      "/components/1",
    ]);
  });
});
