// The OWASP ZAP report parser (docs/spec/CONTRACT.md §11) against reports written here in the shape of ZAP's
// traditional JSON report (`zap-baseline.py -J report.json`): sites, their alerts, and each
// alert's instances.
import type { Finding } from "../../../src/domain/vulnerabilities/finding.ts";
import { DomainError } from "../../../src/errors.ts";
import { readReport } from "../../../src/scans/reports/read-report.ts";
import type { ParsedReport } from "../../../src/scans/reports/report.ts";
import { zapReport } from "../../../src/scans/reports/zap-report.ts";
import { invalidPaths } from "../../helpers/report-parsing.ts";

type Json = Record<string, unknown>;
/** What a JSON file holds: keys set to undefined (to leave a field out) disappear. */
const asJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

// Written out here rather than imported, so a wrong band in the code fails these tests.
const BAND_FLOOR = { critical: 9.0, high: 7.0, medium: 4.0, low: 0.1 } as const;

const SITE = "https://app.example";

// ---- report builders ------------------------------------------------------------------------

function instance(overrides: Json = {}): Json {
  return asJson({
    uri: `${SITE}/search?searchTerm=ZAP`,
    method: "GET",
    param: "searchTerm",
    attack: "",
    evidence: "",
    otherinfo: "",
    ...overrides,
  });
}

const RISK_DESC = { "3": "High", "2": "Medium", "1": "Low", "0": "Informational" } as const;

/** An alert as ZAP writes it: texts in HTML paragraphs, numbers as strings. */
function alert(overrides: Json = {}): Json {
  const riskcode = (overrides["riskcode"] as keyof typeof RISK_DESC | undefined) ?? "3";
  const instances = (overrides["instances"] as unknown[] | undefined) ?? [
    instance({ attack: "<scrIpt>alert(1);</scRipt>", evidence: "<scrIpt>alert(1);</scRipt>" }),
    instance({
      uri: `${SITE}/comments`,
      method: "POST",
      param: "commentBody",
      attack: "</p><scrIpt>alert(1);</scRipt><p>",
      evidence: "</p><scrIpt>alert(1);</scRipt><p>",
    }),
  ];
  return asJson({
    pluginid: "40012",
    alertRef: "40012",
    alert: "Cross Site Scripting (Reflected)",
    name: "Cross Site Scripting (Reflected)",
    riskcode,
    confidence: "2",
    riskdesc: `${RISK_DESC[riskcode] ?? "High"} (Medium)`,
    desc: "<p>Cross-site Scripting (XSS) is an attack technique that echoes attacker-supplied code into a user&#39;s browser.</p><p>The code runs in the site&apos;s origin &amp; can read its cookies.</p>",
    instances,
    count: String(instances.length),
    solution:
      "<p>Phase: Architecture and Design</p><p>Use a vetted library or framework that does not allow this weakness to occur — e.g. &lt;template&gt; escaping, &quot;OWASP ESAPI&quot; &#x2713;</p>",
    otherinfo: "",
    reference:
      "<p>https://owasp.org/www-community/attacks/xss/</p><p>https://cwe.mitre.org/data/definitions/79.html</p>",
    cweid: "79",
    wascid: "8",
    sourceid: "1",
    ...overrides,
  });
}

function site(alerts: unknown[] = [alert()], name = SITE): Json {
  const url = new URL(name);
  return {
    "@name": name,
    "@host": url.hostname,
    "@port": url.port || (url.protocol === "https:" ? "443" : "80"),
    "@ssl": String(url.protocol === "https:"),
    alerts,
  };
}

/** ZAP 2.15's traditional JSON report. */
function zapDocument(sites: unknown[] = [site()], extra: Json = {}): Json {
  return asJson({
    "@programName": "ZAP",
    "@version": "2.15.0",
    "@generated": "Thu, 2 May 2024 10:15:00",
    site: sites,
    ...extra,
  });
}

const pathsOfInvalid = (document: unknown) => invalidPaths(parse, document);
const parse = (document: unknown): ParsedReport => zapReport.parse(document);
/** The findings of a one-site report holding these alerts. */
const findingsOf = (...alerts: Json[]): Finding[] => parse(zapDocument([site(alerts)])).findings;

function readError(document: unknown, format?: string): DomainError {
  try {
    readReport(document, format);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error("readReport accepted the document");
}

const hasHtml = (text: string) => /<\/?(p|br|b|i|a)\b[^>]*>/i.test(text);

// ---- tests ----------------------------------------------------------------------------------

describe("zapReport.detect", () => {
  it("recognises a ZAP report, with or without @programName (ZAP before 2.10 wrote none)", () => {
    expect(zapReport.detect(zapDocument())).toBe(true);
    expect(zapReport.detect(zapDocument([], { "@programName": undefined }))).toBe(true);
  });

  it.each<[string, unknown]>([
    ["a SARIF log", { version: "2.1.0", runs: [] }],
    ["a Grype report", { matches: [], descriptor: { name: "grype", version: "0.74.0" } }],
    ["a site list without a version nor program name", { site: [] }],
    ["a site that is not a list", { "@version": "2.15.0", site: site() }],
    ["null", null],
  ])("rejects %s", (_what, document) => {
    expect(zapReport.detect(document)).toBe(false);
  });
});

describe("zapReport.parse — a baseline scan report", () => {
  const report = parse(zapDocument());

  it("names the format, the tool and its version, and the dast scan type", () => {
    expect(report.format).toBe("zap");
    expect(report.tool).toBe("ZAP");
    expect(report.toolVersion).toBe("2.15.0");
    expect(report.scanType).toBe("dast");
  });

  it("makes one finding per alert instance", () => {
    expect(report.findings.map((f) => f.location)).toEqual([`${SITE}/search?searchTerm=ZAP`, `${SITE}/comments`]);
    expect(new Set(report.findings.map((f) => f.fingerprint)).size).toBe(2);
  });

  it("maps an alert instance field by field", () => {
    const finding = report.findings[0]!;
    expect(finding.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(finding.title).toBe("Cross Site Scripting (Reflected)");
    // The description is the alert's, as text (no HTML, entities decoded), with what the instance adds.
    expect(hasHtml(finding.description)).toBe(false);
    expect(finding.description).toMatch(
      /^Cross-site Scripting \(XSS\) is an attack technique that echoes attacker-supplied code into a user's browser\.\s+The code runs in the site's origin & can read its cookies\./,
    );
    expect(finding.description).toContain("searchTerm");
    expect(finding.description).toContain("<scrIpt>alert(1);</scRipt>");
    expect(finding.severity).toBe("high");
    expect(finding.cwe).toBe("CWE-79");
    expect(finding.cve).toBeNull();
    expect(finding.cvssScore).toBe(BAND_FLOOR.high);
    expect(finding.introducedIn).toBe(`${SITE}/search?searchTerm=ZAP`);
    expect(finding.remediation).toMatch(
      /^Phase: Architecture and Design\s+Use a vetted library or framework that does not allow this weakness to occur — e\.g\. <template> escaping, "OWASP ESAPI" ✓$/,
    );
    expect(finding.packageName).toBeNull();
    expect(finding.packageVersion).toBeNull();
    expect(finding.location).toBe(`${SITE}/search?searchTerm=ZAP`);
  });

  it("gives each instance its own URL, parameter and evidence", () => {
    const finding = report.findings[1]!;
    expect(finding.location).toBe(`${SITE}/comments`);
    expect(finding.introducedIn).toBe(`${SITE}/comments`);
    expect(finding.description).toContain("commentBody");
    expect(finding.description).toContain("</p><scrIpt>alert(1);</scRipt><p>");
    expect(finding.title).toBe(report.findings[0]!.title);
    expect(finding.remediation).toBe(report.findings[0]!.remediation);
  });
});

describe("zapReport.parse — risk, CWE and texts", () => {
  it.each<[string, keyof typeof BAND_FLOOR]>([
    ["3", "high"],
    ["2", "medium"],
    ["1", "low"],
  ])("maps riskcode %s to %s, scored at the band's floor", (riskcode, severity) => {
    const findings = findingsOf(alert({ riskcode }));
    expect(findings).toHaveLength(2);
    for (const f of findings) {
      expect(f.severity).toBe(severity);
      expect(f.cvssScore).toBe(BAND_FLOOR[severity]);
    }
  });

  it("skips informational alerts (riskcode 0), keeping the others", () => {
    const findings = findingsOf(
      alert({
        pluginid: "10027",
        alert: "Information Disclosure - Suspicious Comments",
        riskcode: "0",
        cweid: "200",
        instances: [instance({ uri: `${SITE}/app.js`, param: "" })],
      }),
      alert({
        pluginid: "10038",
        alert: "Content Security Policy (CSP) Header Not Set",
        riskcode: "2",
        cweid: "693",
        instances: [instance({ uri: `${SITE}/`, param: "" })],
      }),
    );
    expect(findings.map((f) => f.title)).toEqual(["Content Security Policy (CSP) Header Not Set"]);
    expect(findings[0]!.severity).toBe("medium");
    expect(findings[0]!.cwe).toBe("CWE-693");
  });

  it("has no findings when every alert is informational, or a site has none", () => {
    const report = parse(zapDocument([site([alert({ riskcode: "0" })]), site([], "http://other.example")]));
    expect(report.findings).toEqual([]);
  });

  it.each<[string, string | undefined]>([
    ["-1 (ZAP's none)", "-1"],
    ["0", "0"],
    ["missing", undefined],
    ["empty", ""],
  ])("gives CWE-0 when the cweid is %s", (_what, cweid) => {
    const [finding] = findingsOf(alert({ cweid, instances: [instance()] }));
    expect(finding!.cwe).toBe("CWE-0");
  });

  it("takes the alert's name when it has no `alert` field", () => {
    const [finding] = findingsOf(
      alert({ alert: undefined, name: "Absence of Anti-CSRF Tokens", instances: [instance()] }),
    );
    expect(finding!.title).toBe("Absence of Anti-CSRF Tokens");
  });

  it("decodes decimal and hexadecimal character references and line breaks in the solution", () => {
    const [finding] = findingsOf(
      alert({ solution: "<p>Set&#32;the&#x20;header:<br/>X-Frame-Options: DENY</p>", instances: [instance()] }),
    );
    expect(finding!.remediation).toMatch(/^Set the header:\s*\nX-Frame-Options: DENY$/);
  });

  it("decodes each entity once: an escaped entity stays an entity in the text", () => {
    const [finding] = findingsOf(
      alert({ solution: "<p>Write &amp;lt; rather than &lt;</p>", instances: [instance()] }),
    );
    expect(finding!.remediation).toBe("Write &lt; rather than <");
  });

  it("decodes every named HTML entity, and a reference to no character as U+FFFD (never a lone surrogate)", () => {
    const [finding] = findingsOf(
      alert({
        solution: "<p>Caf&eacute; &mdash; r&eacute;sum&eacute; &hellip; &#xD800;&#0;</p>",
        instances: [instance()],
      }),
    );
    expect(finding!.remediation).toBe("Café — résumé … \uFFFD\uFFFD");
  });

  it("keeps the alert's other information, as text, in the description", () => {
    const [finding] = findingsOf(
      alert({
        otherinfo: "<p>The page&#39;s comment mentions &quot;TODO: remove admin&quot;.</p>",
        instances: [instance()],
      }),
    );
    expect(finding!.description).toContain(`The page's comment mentions "TODO: remove admin".`);
    expect(hasHtml(finding!.description)).toBe(false);
  });

  it("has a remediation even when the alert gives no solution", () => {
    const [finding] = findingsOf(alert({ solution: "", instances: [instance()] }));
    expect(finding!.remediation.length).toBeGreaterThan(0);
  });

  it("keeps unicode texts and URLs", () => {
    const uri = `${SITE}/recherche?q=%C3%A9t%C3%A9`;
    const [finding] = findingsOf(
      alert({
        alert: "Injection — « données » 日本語 😀",
        desc: "<p>Données non échappées&nbsp;: 😀 ✓</p>",
        instances: [instance({ uri, param: "q" })],
      }),
    );
    expect(finding!.title).toBe("Injection — « données » 日本語 😀");
    expect(finding!.description).toMatch(/^Données non échappées[ \u00a0]: 😀 ✓/u);
    expect(finding!.location).toBe(uri);
  });

  it("clips a very long description", () => {
    const [finding] = findingsOf(alert({ desc: `<p>${"A".repeat(100_000)}</p>`, instances: [instance()] }));
    expect(finding!.description.length).toBeLessThanOrEqual(20_000);
    expect(finding!.description.startsWith("AAAA")).toBe(true);
  });
});

describe("zapReport.parse — alerts without instances and several sites", () => {
  it.each<[string, Json]>([
    ["an empty instance list", { instances: [] }],
    ["no instance list", { instances: undefined }],
  ])("makes one finding at the site's URL for an alert with %s", (_what, overrides) => {
    const document = zapDocument([site([{ ...alert(), ...overrides }])]);
    if (overrides["instances"] === undefined)
      delete ((document["site"] as Json[])[0]!["alerts"] as Json[])[0]!["instances"];
    const findings = parse(document).findings;
    expect(findings).toHaveLength(1);
    expect(findings[0]!.location).toBe(SITE);
    expect(findings[0]!.introducedIn).toBe(SITE);
    expect(findings[0]!.title).toBe("Cross Site Scripting (Reflected)");
    expect(findings[0]!.severity).toBe("high");
  });

  it("reads every site, each finding at its instance's URL", () => {
    const api = "https://api.example:8443";
    const report = parse(
      zapDocument([
        site([alert({ instances: [instance()] })]),
        site([alert({ instances: [instance({ uri: `${api}/v1/search?q=x` })] })], api),
      ]),
    );
    expect(report.findings.map((f) => f.location)).toEqual([`${SITE}/search?searchTerm=ZAP`, `${api}/v1/search?q=x`]);
  });

  it("names the tool ZAP when the report has no @programName", () => {
    const report = parse(zapDocument([site()], { "@programName": undefined, "@version": "2.9.0" }));
    expect(report.tool).toBe("ZAP");
    expect(report.toolVersion).toBe("2.9.0");
  });
});

describe("zapReport.parse — fingerprints", () => {
  const fingerprints = (document: Json) => parse(document).findings.map((f) => f.fingerprint);

  it("are the same for every parse of the same report", () => {
    expect(fingerprints(zapDocument())).toEqual(fingerprints(zapDocument()));
  });

  it("do not change with what describes the alert (risk, confidence, texts, attack and evidence)", () => {
    const rescanned = alert({
      riskcode: "2",
      confidence: "3",
      desc: "<p>Reworded.</p>",
      solution: "<p>Reworded too.</p>",
      instances: [instance({ method: "POST", attack: "javascript:alert(1)", evidence: "javascript:alert(1)" })],
    });
    const [before] = findingsOf(alert({ instances: [instance()] }));
    const [after] = findingsOf(rescanned);
    expect(after!.fingerprint).toBe(before!.fingerprint);
  });

  it("differ by plugin, URL and parameter", () => {
    const [base] = findingsOf(alert({ instances: [instance()] }));
    const others = [
      findingsOf(alert({ pluginid: "40014", instances: [instance()] }))[0]!,
      findingsOf(alert({ instances: [instance({ uri: `${SITE}/search?searchTerm=other` })] }))[0]!,
      findingsOf(alert({ instances: [instance({ param: "lang" })] }))[0]!,
      findingsOf(alert({ instances: [instance({ param: "" })] }))[0]!,
    ];
    expect(new Set([base!, ...others].map((f) => f.fingerprint)).size).toBe(5);
  });

  it("are those of an instance at the site's URL for an alert without instances", () => {
    const [atSite] = findingsOf(alert({ instances: [] }));
    const [explicit] = findingsOf(alert({ instances: [instance({ uri: SITE, param: "" })] }));
    expect(atSite!.fingerprint).toBe(explicit!.fingerprint);
  });
});

describe("zapReport.parse — invalid reports", () => {
  it("names a riskcode ZAP does not write", () => {
    expect(pathsOfInvalid(zapDocument([site([alert(), alert({ riskcode: "7" })])]))).toEqual([
      "/site/0/alerts/1/riskcode",
    ]);
  });

  it("names an alert without a plugin id and an instance without a URI", () => {
    const paths = pathsOfInvalid(
      zapDocument([
        site([alert({ pluginid: undefined }), alert({ instances: [instance(), instance({ uri: undefined })] })]),
      ]),
    );
    expect(paths).toEqual(expect.arrayContaining(["/site/0/alerts/0/pluginid", "/site/0/alerts/1/instances/1/uri"]));
  });

  it("names a missing @version", () => {
    expect(pathsOfInvalid(zapDocument([site()], { "@version": undefined }))).toEqual(["/@version"]);
  });
});

describe("readReport with ZAP reports", () => {
  it("detects a ZAP report", () => {
    const report = readReport(zapDocument());
    expect(report.format).toBe("zap");
    expect(report.scanType).toBe("dast");
    expect(report.findings).toEqual(parse(zapDocument()).findings);
  });

  it("reads a report named as ZAP", () => {
    expect(readReport(zapDocument(), "zap").findings).toHaveLength(2);
  });

  it("answers a validation error with the JSON Pointer of a riskcode ZAP does not write", () => {
    const error = readError(zapDocument([site([alert({ riskcode: "7" })])]));
    expect(error.kind).toBe("invalid");
    expect(error.details.errors?.map((e) => e.path)).toEqual(["/site/0/alerts/0/riskcode"]);
  });

  it("answers a validation error when a ZAP report is named as SARIF", () => {
    const error = readError(zapDocument(), "sarif");
    expect(error.kind).toBe("invalid");
    expect(error.details.errors?.length).toBeGreaterThan(0);
  });
});
