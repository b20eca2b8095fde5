// What each reader says a report covered and whether it says its tool failed (issue 60): the
// parts a scan may resolve within, and the failure that completes no scan.
import { readReport } from "../../../src/scans/reports/read-report.ts";
import {
  cyclonedxBom,
  grypeReport,
  sarifLog,
  trivyReport,
  validReport,
  ZAP_SITE,
  zapReport,
} from "../../helpers/scanner-reports.ts";

const read = (document: unknown, format?: string) => readReport(JSON.parse(JSON.stringify(document)), format);
const part = (tool: string, category = "") => JSON.stringify([tool, category]);

describe("SARIF", () => {
  it("covers each run's part, and no part at all with no runs", () => {
    const report = read(
      sarifLog([
        { tool: "CodeQL", automationId: "/language:python/", findings: [1001] },
        { tool: "CodeQL", automationId: "/language:javascript/run-42", findings: [] },
      ]),
    );
    expect(report.failure).toBeNull();
    expect(report.coverage).toEqual({
      parts: [part("CodeQL", "/language:python"), part("CodeQL", "/language:javascript")],
      partFailed: false,
    });
    expect(report.findings.map((f) => f.part)).toEqual([part("CodeQL", "/language:python")]);
    // A single-component id names the run, not a category.
    expect(read(sarifLog([{ automationId: "nightly-2026-12-01", findings: [] }])).coverage.parts).toEqual([
      part("Semgrep"),
    ]);
    expect(read({ version: "2.1.0", runs: [] }).coverage).toEqual({ parts: [], partFailed: false });
  });

  it("leaves a failed run's results out, and its part uncovered even beside a run of the same part that completed", () => {
    const report = read(
      sarifLog([
        { findings: [1001], executionSuccessful: true },
        { findings: [1002], errorNotification: "Rule crashed" },
        { tool: "Bandit", findings: [] },
      ]),
    );
    expect(report.failure).toBeNull();
    expect(report.findings.map((f) => f.location)).toEqual(["src/module-1001.js:10"]);
    expect(report.coverage).toEqual({ parts: [part("Bandit")], partFailed: true });
  });

  it.each<[string, unknown, RegExp, string]>([
    ["no results", sarifLog([{ findings: null }]), /Semgrep's run has no results/, "/runs/0/results"],
    [
      "executionSuccessful: false",
      sarifLog([{ findings: [1001], executionSuccessful: false }]),
      /executionSuccessful: false/,
      "/runs/0/invocations/0/executionSuccessful",
    ],
    [
      "an error notification",
      sarifLog([{ findings: [], errorNotification: "Timed out after 600 s" }]),
      /reported an error: "Timed out after 600 s"/,
      "/runs/0/invocations/0/toolExecutionNotifications/0",
    ],
    ["runs: null", { version: "2.1.0", runs: null }, /runs are null/, "/runs"],
  ])("says the tool failed when every run failed: %s", (_what, log, reason, path) => {
    const report = read(log, "sarif");
    expect(report.failure?.reason).toMatch(reason);
    expect(report.failure?.errors).toContainEqual(expect.objectContaining({ path }));
    expect(report.findings).toEqual([]);
  });

  it("does not take a warning notification for a failure", () => {
    const log = sarifLog([{ findings: [1001], executionSuccessful: true }]) as any;
    log.runs[0].invocations[0].toolExecutionNotifications = [
      { level: "warning", message: { text: "Skipped a.min.js" } },
    ];
    expect(read(log).failure).toBeNull();
  });
});

describe("Trivy", () => {
  it("covers the vulnerability targets it lists, an image's OS packages as one part", () => {
    const report = read(
      trivyReport([
        { target: "shop:1.4 (alpine 3.20.3)", class: "os-pkgs", findings: [1001] },
        { target: "web/package-lock.json", findings: [] },
        { target: "web/.env", class: "secret", findings: [] },
      ]),
    );
    expect(report.coverage).toEqual({ parts: ["os-pkgs", "target:web/package-lock.json"], partFailed: false });
    expect(report.findings.map((f) => f.part)).toEqual(["os-pkgs"]);
    expect(read(trivyReport(null)).coverage).toEqual({ parts: [], partFailed: false });
    expect(report.failure).toBeNull();
  });
});

describe("ZAP", () => {
  it("covers the sites it lists; a report of no site says ZAP reached nothing", () => {
    const report = read(zapReport([{ name: ZAP_SITE, findings: [1001] }]));
    expect(report.coverage).toEqual({ parts: [ZAP_SITE], partFailed: false });
    expect(report.findings.map((f) => f.part)).toEqual([ZAP_SITE]);
    const none = read(zapReport([]));
    expect(none.failure).toEqual({
      reason: expect.stringMatching(/lists no site/),
      errors: [expect.objectContaining({ path: "/site" })],
    });
  });
});

describe("CycloneDX and Grype", () => {
  it("cover all their tool's findings, but a BOM without vulnerabilities covers none", () => {
    expect(read(cyclonedxBom([])).coverage).toEqual({ parts: null, partFailed: false });
    expect(read(cyclonedxBom(null)).coverage).toEqual({ parts: [], partFailed: false });
    expect(read(grypeReport([])).coverage).toEqual({ parts: null, partFailed: false });
    expect(read(validReport("grype", [1001])).failure).toBeNull();
  });
});
