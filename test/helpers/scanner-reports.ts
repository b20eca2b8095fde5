// Valid scanner reports of each format docs/spec/CONTRACT.md §11 reads, written here to each format's
// specification (SARIF 2.1.0, CycloneDX 1.6, Trivy's and Grype's JSON as their types define them,
// ZAP's traditional JSON), with one finding per number given: what the failed-report tests and the
// broken-report fuzzer start from. Numbers from 1000 up make CVE ids (CVE-2099-<n>).

export const REPORT_FORMAT_NAMES = ["sarif", "cyclonedx", "trivy", "grype", "zap"] as const;
export type ReportFormatName = (typeof REPORT_FORMAT_NAMES)[number];

/** The tool each builder's reports name: the tool their findings are recorded under. */
export const TOOL_OF: Record<ReportFormatName, string> = {
  sarif: "Semgrep",
  cyclonedx: "osv-scanner",
  trivy: "Trivy",
  grype: "Grype",
  zap: "ZAP",
};

type Json = Record<string, any>;

export interface SarifRunSpec {
  tool?: string;
  /** runAutomationDetails.id, e.g. "/language:python/" (its category: all but the last component). */
  automationId?: string;
  /** Findings; `null`: the run has no results (the tool did not complete). */
  findings: readonly number[] | null;
  /** Whether its invocation says the tool succeeded; absent: no invocation. */
  executionSuccessful?: boolean;
  /** An error-level tool execution notification with this text. */
  errorNotification?: string;
}

const sarifResult = (n: number) => ({
  ruleId: "app/sql-injection",
  ruleIndex: 0,
  level: "error",
  message: { text: `Query built from request input (${n})` },
  locations: [{ physicalLocation: { artifactLocation: { uri: `src/module-${n}.js` }, region: { startLine: 10 } } }],
  partialFingerprints: { primaryLocationLineHash: `hash-${n}:1` },
});

export function sarifRun(spec: SarifRunSpec): Json {
  const invocation =
    spec.executionSuccessful === undefined && spec.errorNotification === undefined
      ? undefined
      : {
          executionSuccessful: spec.executionSuccessful ?? true,
          ...(spec.errorNotification !== undefined && {
            toolExecutionNotifications: [
              { level: "error", message: { text: spec.errorNotification }, descriptor: { id: "fatal" } },
            ],
          }),
        };
  return {
    tool: {
      driver: {
        name: spec.tool ?? TOOL_OF.sarif,
        semanticVersion: "1.90.0",
        rules: [
          {
            id: "app/sql-injection",
            shortDescription: { text: "SQL injection" },
            properties: { tags: ["security", "CWE-89"], "security-severity": "8.1" },
          },
        ],
      },
    },
    ...(spec.automationId !== undefined && { automationDetails: { id: spec.automationId } }),
    ...(invocation && { invocations: [invocation] }),
    ...(spec.findings !== null && { results: spec.findings.map(sarifResult) }),
  };
}

export const sarifLog = (runs: readonly SarifRunSpec[]): Json => ({
  $schema: "https://json.schemastore.org/sarif-2.1.0.json",
  version: "2.1.0",
  runs: runs.map(sarifRun),
});

export function cyclonedxBom(findings: readonly number[] | null): Json {
  return {
    bomFormat: "CycloneDX",
    specVersion: "1.6",
    version: 1,
    metadata: {
      tools: { components: [{ type: "application", name: TOOL_OF.cyclonedx, version: "2.0.0" }] },
      component: { type: "application", "bom-ref": "app", name: "shop", version: "3.1.0" },
    },
    components: (findings ?? []).map((n) => ({
      type: "library",
      "bom-ref": `pkg-${n}`,
      name: `lib-${n}`,
      version: "1.0.0",
      purl: `pkg:npm/lib-${n}@1.0.0`,
    })),
    ...(findings !== null && {
      vulnerabilities: findings.map((n) => ({
        id: `CVE-2099-${n}`,
        ratings: [{ severity: "high", score: 7.5, method: "CVSSv31" }],
        cwes: [79],
        description: `Cross-site scripting in lib-${n}`,
        affects: [{ ref: `pkg-${n}` }],
      })),
    }),
  };
}

export interface TrivyTargetSpec {
  target: string;
  class?: string;
  findings: readonly number[];
}

export function trivyReport(targets: readonly TrivyTargetSpec[] | null): Json {
  return {
    SchemaVersion: 2,
    CreatedAt: "2026-12-01T10:00:00Z",
    ArtifactName: ".",
    ArtifactType: "filesystem",
    Trivy: { Version: "0.58.1" },
    ...(targets !== null && {
      Results: targets.map((t) => ({
        Target: t.target,
        Class: t.class ?? "lang-pkgs",
        Type: t.class === "os-pkgs" ? "alpine" : "npm",
        ...(t.findings.length > 0 && {
          Vulnerabilities: t.findings.map((n) => ({
            VulnerabilityID: `CVE-2099-${n}`,
            PkgName: `lib-${n}`,
            PkgIdentifier: { PURL: `pkg:npm/lib-${n}@1.0.0` },
            InstalledVersion: "1.0.0",
            FixedVersion: "1.0.1",
            Status: "fixed",
            Severity: "HIGH",
            Title: `Prototype pollution in lib-${n}`,
            CweIDs: ["CWE-1321"],
            CVSS: { nvd: { V3Score: 7.3 } },
          })),
        }),
      })),
    }),
  };
}

export const trivyTargets = (findings: readonly number[]): Json =>
  trivyReport([{ target: "package-lock.json", findings }]);

export function grypeReport(findings: readonly number[]): Json {
  return {
    matches: findings.map((n) => ({
      vulnerability: {
        id: `CVE-2099-${n}`,
        dataSource: `https://nvd.nist.gov/vuln/detail/CVE-2099-${n}`,
        severity: "High",
        urls: [],
        description: `Denial of service in lib-${n}`,
        cvss: [{ version: "3.1", metrics: { baseScore: 7.5 } }],
        fix: { versions: ["1.0.1"], state: "fixed" },
      },
      relatedVulnerabilities: [],
      artifact: { name: `lib-${n}`, version: "1.0.0", type: "npm", purl: `pkg:npm/lib-${n}@1.0.0` },
    })),
    source: { type: "directory", target: "/src/shop" },
    distro: { name: "", version: "", idLike: null },
    descriptor: { name: "grype", version: "0.84.0" },
  };
}

export interface ZapSiteSpec {
  name: string;
  findings: readonly number[];
}

export function zapReport(sites: readonly ZapSiteSpec[]): Json {
  return {
    "@programName": TOOL_OF.zap,
    "@version": "2.15.0",
    "@generated": "Mon, 1 Dec 2026 10:00:00",
    site: sites.map((site) => {
      const url = new URL(site.name);
      return {
        "@name": site.name,
        "@host": url.hostname,
        "@port": url.port || (url.protocol === "https:" ? "443" : "80"),
        "@ssl": String(url.protocol === "https:"),
        alerts: site.findings.map((n) => ({
          pluginid: String(n),
          alertRef: String(n),
          alert: `Passive rule ${n}`,
          name: `Passive rule ${n}`,
          riskcode: "2",
          confidence: "2",
          riskdesc: "Medium (Medium)",
          desc: `<p>What rule ${n} found.</p>`,
          instances: [{ uri: `${site.name}/page-${n}`, method: "GET", param: "", attack: "", evidence: "" }],
          count: "1",
          solution: "<p>Set the header.</p>",
          otherinfo: "",
          reference: "",
          cweid: "693",
          wascid: "15",
          sourceid: "3",
        })),
      };
    }),
  };
}

export const ZAP_SITE = "https://shop.example.com";

/** A valid report of `format` with one finding per number (none: a valid report that found nothing). */
export function validReport(format: ReportFormatName, findings: readonly number[]): Json {
  switch (format) {
    case "sarif":
      return sarifLog([{ findings, executionSuccessful: true }]);
    case "cyclonedx":
      return cyclonedxBom(findings);
    case "trivy":
      return trivyTargets(findings);
    case "grype":
      return grypeReport(findings);
    case "zap":
      return zapReport([{ name: ZAP_SITE, findings }]);
  }
}

/** Where each format holds its findings, level by level: the places a broken report is broken at. */
export const STRUCTURE: Record<ReportFormatName, readonly (readonly (string | number)[])[]> = {
  sarif: [
    [],
    ["runs"],
    ["runs", 0],
    ["runs", 0, "tool"],
    ["runs", 0, "tool", "driver"],
    ["runs", 0, "tool", "driver", "name"],
    ["runs", 0, "invocations"],
    ["runs", 0, "invocations", 0],
    ["runs", 0, "invocations", 0, "executionSuccessful"],
    ["runs", 0, "results"],
    ["runs", 0, "results", 0],
    ["runs", 0, "results", 0, "message"],
    ["runs", 0, "results", 0, "message", "text"],
    ["runs", 0, "results", 0, "locations"],
    ["runs", 0, "results", 0, "locations", 0, "physicalLocation"],
  ],
  cyclonedx: [
    [],
    ["specVersion"],
    ["metadata"],
    ["components"],
    ["components", 0],
    ["vulnerabilities"],
    ["vulnerabilities", 0],
    ["vulnerabilities", 0, "id"],
    ["vulnerabilities", 0, "ratings"],
    ["vulnerabilities", 0, "ratings", 0, "score"],
    ["vulnerabilities", 0, "affects"],
    ["vulnerabilities", 0, "affects", 0, "ref"],
  ],
  trivy: [
    [],
    ["SchemaVersion"],
    ["Results"],
    ["Results", 0],
    ["Results", 0, "Target"],
    ["Results", 0, "Class"],
    ["Results", 0, "Vulnerabilities"],
    ["Results", 0, "Vulnerabilities", 0],
    ["Results", 0, "Vulnerabilities", 0, "VulnerabilityID"],
    ["Results", 0, "Vulnerabilities", 0, "PkgName"],
    ["Results", 0, "Vulnerabilities", 0, "Severity"],
  ],
  grype: [
    [],
    ["matches"],
    ["matches", 0],
    ["matches", 0, "vulnerability"],
    ["matches", 0, "vulnerability", "id"],
    ["matches", 0, "vulnerability", "severity"],
    ["matches", 0, "artifact"],
    ["matches", 0, "artifact", "name"],
    ["source"],
  ],
  zap: [
    [],
    ["@version"],
    ["site"],
    ["site", 0],
    ["site", 0, "@name"],
    ["site", 0, "alerts"],
    ["site", 0, "alerts", 0],
    ["site", 0, "alerts", 0, "pluginid"],
    ["site", 0, "alerts", 0, "riskcode"],
    ["site", 0, "alerts", 0, "instances"],
    ["site", 0, "alerts", 0, "instances", 0, "uri"],
  ],
};

/**
 * A JSON value of a type the place does not take, which makes the report invalid there: the
 * report's own value turned into another type (a string for an object or an array, an object for
 * a string, a number or a boolean, …). Places that also take null (Trivy's Vulnerabilities) get a
 * string; no place of STRUCTURE takes a string where it holds a container, nor an object where it
 * holds a scalar.
 */
export function wrongTypeFor(value: unknown): unknown {
  if (Array.isArray(value)) return "a string where a list belongs";
  if (typeof value === "object" && value !== null) return ["an", "array", "where", "an", "object", "belongs"];
  if (typeof value === "string") return { text: value };
  return [value];
}

/** A deep copy of `document` with the value at `path` replaced (the whole document for []). */
export function replacedAt(document: unknown, path: readonly (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const copy = structuredClone(document) as any;
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key];
  parent[path.at(-1)!] = value;
  return copy;
}

/** The value at `path`. */
export const valueAt = (document: unknown, path: readonly (string | number)[]): unknown =>
  path.reduce<any>((node, key) => node?.[key], document);

export const pointerOf = (path: readonly (string | number)[]): string =>
  path.map((key) => `/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
