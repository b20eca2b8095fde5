// The SARIF 2.1.0 parser (docs/spec/CONTRACT.md §11) against logs written here in the shapes CodeQL, Semgrep
// and Trivy give them (each valid against the OASIS schema, which the parser checks first), and
// readReport, which picks a report's parser.
import type * as Sarif from "sarif";
import type { Finding } from "../../../src/domain/vulnerabilities/finding.ts";
import { DomainError } from "../../../src/errors.ts";
import { readReport } from "../../../src/scans/reports/read-report.ts";
import type { ParsedReport } from "../../../src/scans/reports/report.ts";
import { sarifReport } from "../../../src/scans/reports/sarif-report.ts";
import { hasLoneSurrogate, invalidPaths, onlyFinding } from "../../helpers/report-parsing.ts";

type Json = Record<string, unknown>;
/** What a JSON file holds: keys set to undefined (to leave a field out) disappear. */
const asJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

// Written out here rather than imported, so a wrong band in the code fails these tests.
const BAND_FLOOR = { critical: 9.0, high: 7.0, medium: 4.0, low: 0.1 } as const;

const SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json";
const COMMIT = "3f9c2ab7e4d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7";

// ---- log builders ---------------------------------------------------------------------------

function physical(uri: string, startLine: number, startColumn = 5): Sarif.Location {
  return {
    physicalLocation: {
      artifactLocation: { uri, uriBaseId: "%SRCROOT%" },
      region: { startLine, startColumn, endColumn: startColumn + 12 },
    },
  };
}

// CodeQL keeps its queries in a query pack, an extension of the driver.
const XSS_RULE: Sarif.ReportingDescriptor = {
  id: "js/reflected-xss",
  name: "js/reflected-xss",
  shortDescription: { text: "Reflected cross-site scripting" },
  fullDescription: {
    text: "Writing user input directly to an HTTP response allows for a cross-site scripting vulnerability.",
  },
  defaultConfiguration: { enabled: true, level: "error" },
  help: {
    text: "Escape user input before writing it to the response, with a templating engine that escapes by default.",
    markdown: "# Reflected cross-site scripting\nEscape user input before writing it to the response.",
  },
  properties: {
    tags: ["security", "external/cwe/cwe-116", "external/cwe/cwe-079"],
    kind: "path-problem",
    precision: "high",
    "problem.severity": "error",
    "security-severity": "6.1",
  },
};

const SQL_RULE: Sarif.ReportingDescriptor = {
  id: "js/sql-injection",
  name: "js/sql-injection",
  shortDescription: { text: "Database query built from user-controlled sources" },
  fullDescription: {
    text: "Building a database query from user-controlled sources is vulnerable to insertion of malicious code by the user.",
  },
  defaultConfiguration: { enabled: true, level: "error" },
  help: { text: "Use parameterised queries: pass user input as query parameters, never by string concatenation." },
  messageStrings: { default: { text: "This query string depends on a {0} from {1}." } },
  properties: {
    tags: ["security", "external/cwe/cwe-943", "external/cwe/cwe-089", "external/cwe/cwe-090"],
    kind: "path-problem",
    precision: "high",
    "security-severity": "8.8",
  },
};

const LOG_RULE: Sarif.ReportingDescriptor = {
  id: "js/log-injection",
  name: "js/log-injection",
  shortDescription: { text: "Log injection" },
  fullDescription: {
    text: "Building log entries from user-controlled sources is vulnerable to insertion of forged log entries.",
  },
  defaultConfiguration: { enabled: true, level: "error" },
  properties: { tags: ["security", "external/cwe/cwe-117"], kind: "path-problem", precision: "medium" },
};

/** A CodeQL result, its rule referred to by index into the query pack. */
function codeqlResult(rule: 0 | 1 | 2, overrides: Partial<Sarif.Result> = {}): Sarif.Result {
  const descriptor = [XSS_RULE, SQL_RULE, LOG_RULE][rule]!;
  return {
    ruleId: descriptor.id,
    rule: { id: descriptor.id, index: rule, toolComponent: { index: 0 } },
    message: { text: "Cross-site scripting vulnerability due to a [user-provided value](1)." },
    locations: [physical("src/routes/search.js", 42)],
    partialFingerprints: { primaryLocationLineHash: "9a8b7c6d5e4f3a2b:1", primaryLocationStartColumnFingerprint: "12" },
    ...overrides,
  };
}

const CODEQL_RESULTS = {
  xss: codeqlResult(0),
  // No ruleId (the rule reference names it), the message from the rule's message strings, the
  // file by index into the run's artifacts, and a security-severity of its own.
  sql: codeqlResult(1, {
    ruleId: undefined,
    message: { id: "default", arguments: ["user-provided value", "req.query.id"] },
    locations: [{ physicalLocation: { artifactLocation: { index: 1 }, region: { startLine: 17, startColumn: 3 } } }],
    partialFingerprints: { primaryLocationLineHash: "1f2e3d4c5b6a7988:1" },
    properties: { "security-severity": "9.1" },
  }),
  // No level: the rule's default (error); no security-severity anywhere.
  log: codeqlResult(2, {
    message: { text: "Log entry depends on a [user-provided value](1)." },
    locations: [physical("src/server.js", 88)],
    partialFingerprints: { primaryLocationLineHash: "77aa66bb55cc44dd:1" },
  }),
  logNote: codeqlResult(2, {
    level: "note",
    message: { text: "Log entry depends on a [user-provided value](1)." },
    locations: [physical("src/server.js", 120)],
    partialFingerprints: { primaryLocationLineHash: "0011223344556677:1" },
  }),
};

function codeqlRun(results: Sarif.Result[] = Object.values(CODEQL_RESULTS)): Sarif.Run {
  return {
    tool: {
      driver: { name: "CodeQL", organization: "GitHub", semanticVersion: "2.16.1", rules: [] },
      extensions: [
        { name: "codeql/javascript-queries", semanticVersion: "0.8.8", rules: [XSS_RULE, SQL_RULE, LOG_RULE] },
      ],
    },
    artifacts: [
      { location: { uri: "src/routes/search.js", uriBaseId: "%SRCROOT%", index: 0 } },
      { location: { uri: "src/db/users.js", uriBaseId: "%SRCROOT%", index: 1 } },
    ],
    versionControlProvenance: [
      { repositoryUri: "https://github.com/acme/shop", revisionId: COMMIT, branch: "refs/heads/main" },
    ],
    columnKind: "utf16CodeUnits",
    results,
    properties: { "semmle.formatSpecifier": "sarif-latest" },
  };
}

const SEMGREP_SQL = "python.django.security.injection.sql.sql-injection-using-raw.sql-injection-using-raw";
const SEMGREP_SECRET = "generic.secrets.security.detected-generic-secret.detected-generic-secret";

// Semgrep keeps its rules in the driver and refers to them by ruleIndex; it writes no security-severity.
const SEMGREP_RULES: Sarif.ReportingDescriptor[] = [
  {
    id: SEMGREP_SQL,
    name: SEMGREP_SQL,
    shortDescription: { text: "Semgrep Finding: raw SQL built from request data" },
    fullDescription: { text: "Data from the request is passed to raw(); this is a SQL injection." },
    defaultConfiguration: { level: "error" },
    help: {
      text: "Use the Django ORM, or pass parameters to raw() instead of formatting them into the query.",
      markdown: "Use the ORM.",
    },
    helpUri: "https://semgrep.dev/r/python.django.security.injection.sql.sql-injection-using-raw",
    properties: {
      precision: "very-high",
      tags: [
        "CWE-89: Improper Neutralization of Special Elements used in an SQL Command ('SQL Injection')",
        "HIGH CONFIDENCE",
        "OWASP-A01:2017 - Injection",
        "OWASP-A03:2021 - Injection",
        "security",
      ],
    },
  },
  {
    // No default configuration, no CWE, no help: the level defaults to warning.
    id: SEMGREP_SECRET,
    name: SEMGREP_SECRET,
    shortDescription: { text: "Semgrep Finding: generic secret" },
    helpUri: "https://semgrep.dev/r/generic.secrets.security.detected-generic-secret",
    properties: { precision: "very-high", tags: ["security"] },
  },
];

const SEMGREP_RESULTS = {
  // Semgrep's own fingerprint.
  sql: {
    ruleId: SEMGREP_SQL,
    ruleIndex: 0,
    level: "error",
    message: { text: "Detected user input used to build a raw SQL query." },
    locations: [physical("app/views.py", 23)],
    fingerprints: { "matchBasedId/v1": "4c1a7e0d9b8c6f5e3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f" },
    properties: {},
  } satisfies Sarif.Result,
  // No fingerprint at all, no level.
  secret: {
    ruleId: SEMGREP_SECRET,
    ruleIndex: 1,
    message: { text: "A secret is hard-coded in this file." },
    locations: [physical("config/settings.py", 5)],
  } satisfies Sarif.Result,
  secretNone: {
    ruleId: SEMGREP_SECRET,
    ruleIndex: 1,
    level: "none",
    message: { text: "A secret-looking string." },
    locations: [physical("config/local.py", 9)],
  } satisfies Sarif.Result,
};

function semgrepRun(results: Sarif.Result[] = Object.values(SEMGREP_RESULTS)): Sarif.Run {
  return {
    tool: {
      driver: {
        name: "Semgrep OSS",
        semanticVersion: "1.56.0",
        informationUri: "https://semgrep.dev",
        rules: SEMGREP_RULES,
      },
    },
    invocations: [{ executionSuccessful: true, toolExecutionNotifications: [] }],
    results,
  };
}

/** A run of an ad hoc tool with one rule; results refer to it by ruleId. */
function toolRun(
  results: Sarif.Result[],
  rule: Partial<Sarif.ReportingDescriptor> = {},
  extra: Partial<Sarif.Run> = {},
): Sarif.Run {
  return {
    tool: {
      driver: {
        name: "acme-lint",
        version: "3.2.1",
        rules: [{ id: "acme/check", shortDescription: { text: "Acme check" }, ...rule }],
      },
    },
    results,
    ...extra,
  };
}
const result = (overrides: Partial<Sarif.Result> = {}): Sarif.Result => ({
  ruleId: "acme/check",
  message: { text: "Something is wrong here." },
  locations: [physical("lib/a.ts", 3)],
  ...overrides,
});

function sarifLog(runs: Sarif.Run[] = [codeqlRun(), semgrepRun()]): Sarif.Log {
  return asJson({ $schema: SCHEMA, version: "2.1.0", runs });
}

const TRIVY_CVE = "CVE-2023-5363";
function trivyRun(properties?: Json): Sarif.Run {
  return {
    tool: {
      driver: {
        name: "Trivy",
        fullName: "Trivy Vulnerability Scanner",
        informationUri: "https://github.com/aquasecurity/trivy",
        version: "0.48.3",
        rules: [
          {
            id: TRIVY_CVE,
            name: "OsPackageVulnerability",
            shortDescription: { text: "openssl: Incorrect cipher key and IV length processing" },
            fullDescription: {
              text: "Issue summary: A bug has been identified in the processing of key and initialisation vector (IV) lengths.",
            },
            defaultConfiguration: { level: "error" },
            helpUri: "https://avd.aquasec.com/nvd/cve-2023-5363",
            help: {
              text: "Vulnerability CVE-2023-5363\nSeverity: HIGH\nPackage: libcrypto3\nFixed Version: 3.1.4-r0",
              markdown: "**Vulnerability CVE-2023-5363**",
            },
            properties: {
              precision: "very-high",
              "security-severity": "7.5",
              tags: ["vulnerability", "security", "HIGH"],
            },
          },
        ],
      },
    },
    results: [
      {
        ruleId: TRIVY_CVE,
        ruleIndex: 0,
        level: "error",
        message: {
          text: "Package: libcrypto3\nInstalled Version: 3.1.3-r0\nVulnerability CVE-2023-5363\nSeverity: HIGH\nFixed Version: 3.1.4-r0",
        },
        locations: [
          {
            physicalLocation: {
              artifactLocation: { uri: "library/alpine", uriBaseId: "ROOTPATH" },
              region: { startLine: 1, startColumn: 1, endLine: 1, endColumn: 1 },
            },
            message: { text: "library/alpine: libcrypto3@3.1.3-r0" },
          },
        ],
      },
    ],
    columnKind: "utf16CodeUnits",
    originalUriBaseIds: { ROOTPATH: { uri: "file:///" } },
    ...(properties && { properties }),
  };
}

const pathsOfInvalid = (document: unknown) => invalidPaths(parse, document);
const parse = (document: unknown): ParsedReport => sarifReport.parse(document);
const findingsOf = (...runs: Sarif.Run[]): Finding[] => parse(sarifLog(runs)).findings;
const only = (findings: Finding[]): Finding => onlyFinding(findings);
/** The single finding of an ad hoc tool's log holding this one result. */
const one = (r: Sarif.Result, rule: Partial<Sarif.ReportingDescriptor> = {}): Finding =>
  only(findingsOf(toolRun([r], rule)));

function readError(document: unknown, format?: string): DomainError {
  try {
    readReport(document, format);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error("readReport accepted the document");
}
const errorPaths = (document: unknown, format?: string): string[] => {
  const error = readError(document, format);
  expect(error.kind).toBe("invalid");
  return (error.details.errors ?? []).map((e) => e.path);
};

// ---- tests ----------------------------------------------------------------------------------

describe("sarifReport.detect", () => {
  it("recognises a SARIF 2.1.0 log by its version or its $schema", () => {
    expect(sarifReport.detect(sarifLog())).toBe(true);
    expect(sarifReport.detect({ version: "2.1.0", runs: [] })).toBe(true);
    expect(
      sarifReport.detect({
        $schema: "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json",
        runs: [],
      }),
    ).toBe(true);
    // Runs that are not a list are still SARIF's to refuse, with a JSON Pointer to them (issue 60).
    expect(sarifReport.detect({ version: "2.1.0", runs: {} })).toBe(true);
    expect(sarifReport.detect({ version: "2.1.0", runs: "nope" })).toBe(true);
  });

  it.each<[string, unknown]>([
    ["a log without runs", { version: "2.1.0" }],
    ["runs without a version or a SARIF $schema", { runs: [] }],
    ["a ZAP report", { "@programName": "ZAP", "@version": "2.15.0", site: [] }],
    ["null", null],
  ])("rejects %s", (_what, document) => {
    expect(sarifReport.detect(document)).toBe(false);
  });
});

describe("sarifReport.parse — a CodeQL run and a Semgrep run", () => {
  const report = parse(sarifLog());
  const [xss, sql, log, logNote, semgrepSql, secret, secretNone] = report.findings;

  it("names the format, every run's tool, the first tool's version, and the sast scan type", () => {
    expect(report.format).toBe("sarif");
    expect(report.tool).toContain("CodeQL");
    expect(report.tool).toContain("Semgrep OSS");
    expect(report.toolVersion).toBe("2.16.1");
    expect(report.scanType).toBe("sast");
  });

  it("makes one finding per result of every run, each with its own fingerprint", () => {
    expect(report.findings).toHaveLength(7);
    expect(new Set(report.findings.map((f) => f.fingerprint)).size).toBe(7);
    for (const f of report.findings) expect(f.fingerprint).toMatch(/^[0-9a-f]{64}$/);
  });

  it("maps a CodeQL result (rule in the query pack, security-severity on the rule) field by field", () => {
    expect(xss!.title).toBe("Reflected cross-site scripting");
    expect(xss!.description).toBe("Cross-site scripting vulnerability due to a [user-provided value](1).");
    expect(xss!.severity).toBe("medium"); // the rule's 6.1, not its default level (error)
    expect(xss!.cwe).toBe("CWE-79"); // the lowest of 79 and 116, spelt cwe-079
    expect(xss!.cve).toBeNull();
    expect(xss!.cvssScore).toBe(6.1);
    expect(xss!.introducedIn).toBe(`commit ${COMMIT}`);
    expect(xss!.remediation).toBe(XSS_RULE.help!.text);
    expect(xss!.packageName).toBeNull();
    expect(xss!.packageVersion).toBeNull();
    expect(xss!.location).toBe("src/routes/search.js:42");
  });

  it("maps a result with its own security-severity, a message from the rule's strings, and an artifact by index", () => {
    expect(sql!.title).toBe("Database query built from user-controlled sources");
    expect(sql!.description).toBe("This query string depends on a user-provided value from req.query.id.");
    expect(sql!.severity).toBe("critical"); // the result's 9.1 wins over the rule's 8.8
    expect(sql!.cwe).toBe("CWE-89");
    expect(sql!.cve).toBeNull();
    expect(sql!.cvssScore).toBe(9.1);
    expect(sql!.introducedIn).toBe(`commit ${COMMIT}`);
    expect(sql!.remediation).toBe(SQL_RULE.help!.text);
    expect(sql!.packageName).toBeNull();
    expect(sql!.packageVersion).toBeNull();
    expect(sql!.location).toBe("src/db/users.js:17");
  });

  it("takes the level from the rule's default configuration when the result has none", () => {
    expect(log!.title).toBe("Log injection");
    expect(log!.severity).toBe("high");
    expect(log!.cvssScore).toBe(BAND_FLOOR.high);
    expect(log!.cwe).toBe("CWE-117");
    expect(log!.location).toBe("src/server.js:88");
    // No help: the rule's full description is what there is to read.
    expect(log!.remediation).toBe(LOG_RULE.fullDescription!.text);
  });

  it("lets the result's own level win over the rule's default", () => {
    expect(logNote!.severity).toBe("low");
    expect(logNote!.cvssScore).toBe(BAND_FLOOR.low);
    expect(logNote!.location).toBe("src/server.js:120");
  });

  it("maps a Semgrep result (rule by ruleIndex, CWE in a tag's long spelling, its own fingerprint) field by field", () => {
    expect(semgrepSql!.title).toBe("Semgrep Finding: raw SQL built from request data");
    expect(semgrepSql!.description).toBe("Detected user input used to build a raw SQL query.");
    expect(semgrepSql!.severity).toBe("high");
    expect(semgrepSql!.cwe).toBe("CWE-89");
    expect(semgrepSql!.cve).toBeNull();
    expect(semgrepSql!.cvssScore).toBe(BAND_FLOOR.high);
    // Its run names no commit: the location.
    expect(semgrepSql!.introducedIn).toBe("app/views.py:23");
    expect(semgrepSql!.remediation).toBe(SEMGREP_RULES[0]!.help!.text);
    expect(semgrepSql!.packageName).toBeNull();
    expect(semgrepSql!.packageVersion).toBeNull();
    expect(semgrepSql!.location).toBe("app/views.py:23");
  });

  it("defaults to warning when neither the result nor its rule names a level, and to CWE-0 without a CWE tag", () => {
    expect(secret!.title).toBe("Semgrep Finding: generic secret");
    expect(secret!.severity).toBe("medium");
    expect(secret!.cvssScore).toBe(BAND_FLOOR.medium);
    expect(secret!.cwe).toBe("CWE-0");
    expect(secret!.location).toBe("config/settings.py:5");
    expect(secret!.introducedIn).toBe("config/settings.py:5");
    expect(secret!.remediation).toContain(SEMGREP_RULES[1]!.helpUri!);
  });

  it("maps level none to low", () => {
    expect(secretNone!.severity).toBe("low");
    expect(secretNone!.cvssScore).toBe(BAND_FLOOR.low);
  });
});

describe("sarifReport.parse — severity", () => {
  it.each<[Sarif.Result.level, keyof typeof BAND_FLOOR]>([
    ["error", "high"],
    ["warning", "medium"],
    ["note", "low"],
    ["none", "low"],
  ])("maps level %s to %s without a security-severity", (level, severity) => {
    const finding = one(result({ level }));
    expect(finding.severity).toBe(severity);
    expect(finding.cvssScore).toBe(BAND_FLOOR[severity]);
  });

  it.each<[string, keyof typeof BAND_FLOOR]>([
    ["10.0", "critical"],
    ["9.0", "critical"],
    ["8.9", "high"],
    ["7.0", "high"],
    ["6.9", "medium"],
    ["4.0", "medium"],
    ["3.9", "low"],
    ["0.1", "low"],
  ])("maps security-severity %s to %s by CVSS band, whatever the level", (score, severity) => {
    const finding = one(result({ level: "note", properties: { "security-severity": score } }));
    expect(finding.severity).toBe(severity);
    expect(finding.cvssScore).toBe(Number(score));
  });

  it("takes the rule's security-severity when the result has none", () => {
    const finding = one(result({ level: "note" }), { properties: { "security-severity": "7.3" } });
    expect(finding.severity).toBe("high");
    expect(finding.cvssScore).toBe(7.3);
  });

  it("lets the result's security-severity win over the rule's", () => {
    const finding = one(result({ properties: { "security-severity": "2.0" } }), {
      properties: { "security-severity": "9.8" },
    });
    expect(finding.severity).toBe("low");
    expect(finding.cvssScore).toBe(2.0);
  });

  it("falls back on the level when security-severity is not a score", () => {
    const finding = one(result({ level: "error", properties: { "security-severity": "high" } }));
    expect(finding.severity).toBe("high");
    expect(finding.cvssScore).toBe(BAND_FLOOR.high);
  });
});

describe("sarifReport.parse — CWE, title and message", () => {
  it.each<[string, string[], string]>([
    ["CodeQL's external/cwe/cwe-079", ["external/cwe/cwe-079"], "CWE-79"],
    [
      "Semgrep's long spelling",
      ["CWE-22: Improper Limitation of a Pathname to a Restricted Directory ('Path Traversal')"],
      "CWE-22",
    ],
    ["a spelling with a slash in the name", ["CWE-24: Path Traversal: '../filedir'"], "CWE-24"],
    ["the lowest of several", ["CWE-918", "external/cwe/cwe-352", "cwe-1004"], "CWE-352"],
    ["no CWE among other tags", ["security", "OWASP-A03:2021 - Injection", "cwe-top-25"], "CWE-0"],
  ])("reads %s", (_what, tags, cwe) => {
    expect(one(result(), { properties: { tags } }).cwe).toBe(cwe);
  });

  it("titles the finding by the rule's name when it has no short description, else by its id", () => {
    expect(one(result(), { shortDescription: undefined, name: "AcmeCheckName" }).title).toBe("AcmeCheckName");
    expect(only(findingsOf({ tool: { driver: { name: "bare" } }, results: [result()] })).title).toBe("acme/check");
  });

  it("puts the arguments into the rule's message string, in their order", () => {
    const rule = { messageStrings: { swapped: { text: "{1} flows into {0} ({1})." } } };
    expect(one(result({ message: { id: "swapped", arguments: ["sink()", "source()"] } }), rule).description).toBe(
      "source() flows into sink() (source()).",
    );
  });

  it("keeps unicode as it is", () => {
    const finding = one(result({ message: { text: "Données non échappées — « 日本語 » 😀 ✓" } }), {
      shortDescription: { text: "Vérification 🔒 ünïcødé" },
    });
    expect(finding.description).toBe("Données non échappées — « 日本語 » 😀 ✓");
    expect(finding.title).toBe("Vérification 🔒 ünïcødé");
  });

  it("takes file paths written as IRIs (non-ASCII unencoded), and still refuses what is no URI at all", () => {
    expect(one(result({ locations: [physical("src/ünï/日本.ts", 3)] })).location).toBe("src/ünï/日本.ts:3");
    expect(errorPaths(sarifLog([toolRun([result({ locations: [physical("src/a b\\c|.ts", 3)] })])]))).toContain(
      "/runs/0/results/0/locations/0/physicalLocation/artifactLocation/uri",
    );
  });

  it("clips a 100,000-character message to at most 20,000 characters", () => {
    const message = `Tainted data ${"x".repeat(100_000 - 13)}`;
    expect(message).toHaveLength(100_000);
    const finding = one(result({ message: { text: message } }));
    expect(finding.description.length).toBeLessThanOrEqual(20_000);
    expect(finding.description.length).toBeGreaterThan(10_000);
    expect(finding.description.startsWith("Tainted data xxx")).toBe(true);
    expect(finding.title).toBe("Acme check");
  });

  it("clips a long message of emoji without splitting a surrogate pair", () => {
    for (const prefix of ["", "a"]) {
      const finding = one(result({ message: { text: prefix + "😀".repeat(50_000) } }));
      expect(finding.description.length).toBeLessThanOrEqual(20_000);
      expect(hasLoneSurrogate(finding.description)).toBe(false);
    }
  });
});

describe("sarifReport.parse — results that are not findings", () => {
  const skipped: [string, Partial<Sarif.Result>][] = [
    ["kind pass", { kind: "pass" }],
    ["kind notApplicable", { kind: "notApplicable" }],
    ["kind informational", { kind: "informational" }],
    ["baselineState absent", { baselineState: "absent" }],
  ];
  const kept: [string, Partial<Sarif.Result>][] = [
    ["kind fail", { kind: "fail" }],
    ["an in-source suppression without a status", { suppressions: [{ kind: "inSource" }] }],
    [
      "an accepted external suppression",
      { suppressions: [{ kind: "external", status: "accepted", justification: "Test code" }] },
    ],
    ["a suppression under review", { suppressions: [{ kind: "external", status: "underReview" }] }],
    ["a rejected suppression", { suppressions: [{ kind: "inSource", status: "rejected" }] }],
    ["baselineState new", { baselineState: "new" }],
    ["baselineState unchanged", { baselineState: "unchanged" }],
  ];

  it.each(skipped)("skips a result with %s", (_what, overrides) => {
    const findings = findingsOf(toolRun([result(overrides), result({ locations: [physical("lib/kept.ts", 1)] })]));
    expect(findings.map((f) => f.location)).toEqual(["lib/kept.ts:1"]);
  });

  it.each(kept)("keeps a result with %s", (_what, overrides) => {
    expect(one(result(overrides)).location).toBe("lib/a.ts:3");
  });

  it.each(["pass", "notApplicable", "informational"])(
    "skips a result of kind %s before the schema's check, so it may lack a message",
    (kind) => {
      const { message: _none, ...bare } = result({
        kind: kind as Sarif.Result.kind,
        locations: [physical("lib/not-a-finding.ts", 9)],
      });
      const findings = findingsOf(toolRun([bare as Sarif.Result, result({ locations: [physical("lib/kept.ts", 1)] })]));
      expect(findings.map((f) => f.location)).toEqual(["lib/kept.ts:1"]);
    },
  );

  it("still refuses a result that may be a finding and lacks its message", () => {
    const { message: _none, ...bare } = result({ kind: "fail" });
    expect(() => findingsOf(toolRun([bare as Sarif.Result]))).toThrow(
      expect.objectContaining({ errors: [{ path: "/runs/0/results/0/message", message: "Required" }] }),
    );
  });

  it("has no findings for a run without results, nor for a log without runs", () => {
    expect(findingsOf(toolRun([]))).toEqual([]);
    expect(findingsOf({ tool: { driver: { name: "acme-lint" } } })).toEqual([]);
    const empty = parse(sarifLog([]));
    expect(empty.findings).toEqual([]);
    expect(empty.scanType).toBe("sast");
  });
});

describe("sarifReport.parse — suppressions (docs/spec/CONTRACT.md §13)", () => {
  const analysisOf = (suppressions: Sarif.Suppression[]) => one(result({ suppressions })).analysis;

  it("makes an accepted suppression, or one without a status, a not_affected decision with its justification", () => {
    expect(
      analysisOf([{ kind: "external", status: "accepted", justification: "Only test fixtures read this file" }]),
    ).toEqual({
      state: "not_affected",
      justification: null,
      detail: "Only test fixtures read this file",
      response: [],
    });
    expect(analysisOf([{ kind: "inSource" }])?.state).toBe("not_affected");
  });

  it("makes a suppression under review in_triage", () => {
    expect(analysisOf([{ kind: "inSource" }, { kind: "external", status: "underReview" }])?.state).toBe("in_triage");
  });

  it("leaves a result with a rejected suppression, or an empty list of them, undecided", () => {
    expect(
      analysisOf([
        { kind: "external", status: "accepted" },
        { kind: "inSource", status: "rejected" },
      ]),
    ).toBeNull();
    expect(analysisOf([])).toBeNull();
    expect(one(result({})).analysis).toBeNull();
  });

  it("gives the rule's id as the finding's alias", () => {
    expect(one(result({ ruleId: "ACME001" })).aliases).toEqual(["ACME001"]);
  });
});

describe("sarifReport.parse — fingerprints", () => {
  const fingerprints = (log: Sarif.Log) => parse(log).findings.map((f) => f.fingerprint);

  it("are the same for every parse of the same log", () => {
    expect(fingerprints(sarifLog())).toEqual(fingerprints(sarifLog()));
  });

  it("are the same for a result whose line moved when its partialFingerprints are equal", () => {
    const [before] = findingsOf(codeqlRun([CODEQL_RESULTS.xss]));
    const moved = codeqlResult(0, {
      locations: [physical("src/routes/search.js", 57, 9)],
      message: { text: "Reworded message." },
    });
    // Another result now comes first, as it would after an edit above.
    const after = findingsOf(codeqlRun([CODEQL_RESULTS.log, moved]))[1]!;
    expect(after.location).toBe("src/routes/search.js:57");
    expect(after.fingerprint).toBe(before!.fingerprint);
  });

  it("are the same for a result whose line moved when its fingerprints are equal", () => {
    const [before] = findingsOf(semgrepRun([SEMGREP_RESULTS.sql]));
    const [after] = findingsOf(semgrepRun([{ ...SEMGREP_RESULTS.sql, locations: [physical("app/views.py", 31)] }]));
    expect(after!.location).toBe("app/views.py:31");
    expect(after!.fingerprint).toBe(before!.fingerprint);
  });

  it("differ when the partialFingerprints differ", () => {
    const [before] = findingsOf(codeqlRun([CODEQL_RESULTS.xss]));
    const [after] = findingsOf(
      codeqlRun([
        codeqlResult(0, {
          partialFingerprints: {
            primaryLocationLineHash: "ffffeeeeddddcccc:1",
            primaryLocationStartColumnFingerprint: "12",
          },
        }),
      ]),
    );
    expect(after!.fingerprint).not.toBe(before!.fingerprint);
  });

  it("differ for equal partialFingerprints of two rules", () => {
    const same = { primaryLocationLineHash: "9a8b7c6d5e4f3a2b:1" };
    const findings = findingsOf(
      codeqlRun([codeqlResult(0, { partialFingerprints: same }), codeqlResult(2, { partialFingerprints: same })]),
    );
    expect(findings).toHaveLength(2);
    expect(findings[0]!.fingerprint).not.toBe(findings[1]!.fingerprint);
  });

  it("differ for equal partialFingerprints in two files (CodeQL's line hash is of the line's text, not its file)", () => {
    const same = { primaryLocationLineHash: "9a8b7c6d5e4f3a2b:1" };
    const findings = findingsOf(
      codeqlRun([
        codeqlResult(0, { partialFingerprints: same, locations: [physical("src/routes/search.js", 42)] }),
        codeqlResult(0, { partialFingerprints: same, locations: [physical("src/routes/admin-search.js", 42)] }),
      ]),
    );
    expect(findings).toHaveLength(2);
    expect(findings[0]!.fingerprint).not.toBe(findings[1]!.fingerprint);
  });

  it("are the rule and the location for a result without fingerprints: same place same fingerprint, moved or other rule, another", () => {
    const base = one(result()).fingerprint;
    expect(one(result({ message: { text: "Reworded." }, level: "error" })).fingerprint).toBe(base);
    const others = [
      one(result({ locations: [physical("lib/a.ts", 4)] })).fingerprint,
      one(result({ locations: [physical("lib/b.ts", 3)] })).fingerprint,
      only(findingsOf(toolRun([result({ ruleId: "acme/other" })], { id: "acme/other" }))).fingerprint,
    ];
    expect(new Set([base, ...others]).size).toBe(4);
  });

  it("are the same whichever runner directory the checkout was in, given the checkout path", () => {
    const at = (root: string) =>
      only(
        readReport(
          sarifLog([
            toolRun([
              result({
                locations: [
                  {
                    physicalLocation: {
                      artifactLocation: { uri: `file://${root}/lib/a.ts` },
                      region: { startLine: 3 },
                    },
                  },
                ],
              }),
            ]),
          ]),
          undefined,
          {
            checkoutPath: root,
          },
        ).findings,
      );
    const first = at("/home/runner/work/shop/shop");
    const second = at("/builds/acme/shop");
    expect(first.location).toBe("lib/a.ts:3");
    expect(second.location).toBe("lib/a.ts:3");
    expect(second.fingerprint).toBe(first.fingerprint);
    expect(first.fingerprint).toBe(one(result()).fingerprint);
  });
});

describe("sarifReport.parse — a Trivy-written log", () => {
  it("is an sca report whose findings carry the rule's CVE", () => {
    const report = parse(sarifLog([trivyRun()]));
    expect(report.tool).toBe("Trivy");
    expect(report.toolVersion).toBe("0.48.3");
    expect(report.scanType).toBe("sca");
    const finding = only(report.findings);
    expect(finding.cve).toBe(TRIVY_CVE);
    expect(finding.title).toBe("openssl: Incorrect cipher key and IV length processing");
    expect(finding.severity).toBe("high");
    expect(finding.cvssScore).toBe(7.5);
    expect(finding.cwe).toBe("CWE-0");
    expect(finding.location).toBe("library/alpine:1");
    expect(finding.description).toContain("Installed Version: 3.1.3-r0");
  });

  it("is a container report when it names the image it scanned", () => {
    const report = parse(
      sarifLog([trivyRun({ imageName: "alpine:3.18", repoTags: ["alpine:3.18"], repoDigests: [] })]),
    );
    expect(report.scanType).toBe("container");
    expect(only(report.findings).cve).toBe(TRIVY_CVE);
  });
});

describe("sarifReport.parse — invalid logs", () => {
  const withResult = (r: Json) => ({
    version: "2.1.0",
    runs: [{ tool: { driver: { name: "acme-lint" } }, results: [r] }],
  });

  it("names a level SARIF does not define", () => {
    expect(pathsOfInvalid(withResult({ ...result(), level: "catastrophic" }))).toContain("/runs/0/results/0/level");
  });

  it("names a result without a message", () => {
    expect(pathsOfInvalid(withResult({ ruleId: "acme/check" }))).toContain("/runs/0/results/0/message");
  });

  it("names a run without a tool", () => {
    expect(pathsOfInvalid({ version: "2.1.0", runs: [{ results: [] }] })).toContain("/runs/0/tool");
  });

  it("rejects another SARIF version", () => {
    expect(pathsOfInvalid({ ...sarifLog(), version: "2.0.0" })).toContain("/version");
  });
});

describe("readReport", () => {
  const documents: [string, unknown][] = [
    ["sarif", sarifLog()],
    ["cyclonedx", { bomFormat: "CycloneDX", specVersion: "1.5", version: 1, vulnerabilities: [] }],
    ["trivy", { SchemaVersion: 2, ArtifactName: ".", ArtifactType: "filesystem", Results: [] }],
    [
      "grype",
      { matches: [], source: { type: "directory", target: "." }, descriptor: { name: "grype", version: "0.74.0" } },
    ],
    ["zap", { "@programName": "ZAP", "@version": "2.15.0", "@generated": "Thu, 2 May 2024 10:15:00", site: [] }],
  ];

  it.each(documents)("detects a %s report", (format, document) => {
    expect(readReport(document).format).toBe(format);
  });

  it("reads a SARIF log as the parser does", () => {
    const report = readReport(sarifLog());
    expect(report).toEqual(parse(sarifLog()));
  });

  it("reads a log named as SARIF", () => {
    expect(readReport(sarifLog(), "sarif").findings).toHaveLength(7);
  });

  it("throws a validation error at `format` for a format it does not know", () => {
    const error = readError(sarifLog(), "pdf");
    expect(error.kind).toBe("invalid");
    expect(error.details.errors?.map((e) => e.path)).toEqual(["format"]);
  });

  it.each<[string, unknown]>([
    ["an object of no known format", { hello: "world" }],
    ["an array", [1, 2, 3]],
    ["null", null],
  ])("throws a validation error for %s", (_what, document) => {
    const error = readError(document);
    expect(error.kind).toBe("invalid");
    expect(error.details.errors?.length).toBeGreaterThan(0);
  });

  it("answers an invalid SARIF log with JSON Pointers into it", () => {
    const document = asJson({
      version: "2.1.0",
      runs: [{ tool: { driver: { name: "acme-lint" } }, results: [{ ...result(), level: "catastrophic" }] }],
    });
    expect(errorPaths(document)).toContain("/runs/0/results/0/level");
  });

  it("answers a log named as another format with that format's errors", () => {
    expect(errorPaths(sarifLog(), "zap")).toEqual(expect.arrayContaining(["/@version", "/site"]));
  });
});
