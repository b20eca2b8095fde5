// Reports written by real tools that run here, not by hand: ESLint's SARIF (through
// @microsoft/eslint-formatter-sarif, with eslint-plugin-security on a deliberately vulnerable
// sample) and the CycloneDX SBOM that `npm sbom` generates for this very project. Each upload's
// vulnerabilities are checked field by field against the file the tool wrote.
import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type * as Sarif from "sarif";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

const run = promisify(execFile);
const SAMPLE = "test/fixtures/eslint-sample";

let t: TestApp;
let dir: string;
beforeAll(async () => {
  t = await startTestApp({ SCAN_DURATION_MS: "0" });
  dir = await mkdtemp(path.join(tmpdir(), "real-tools-"));
});
afterAll(async () => {
  await t.close();
  await rm(dir, { recursive: true, force: true });
});

const newApplication = async (name: string) =>
  (await t.request("POST", "/applications", { body: { name } })).body.id as string;

const upload = (app: string, report: string, query = "") =>
  t.request("POST", `/applications/${app}/scan-reports${query}`, {
    rawBody: report,
    headers: { "content-type": "application/json" },
  });

const vulnerabilitiesOf = async (app: string) =>
  (await t.request("GET", `/applications/${app}/vulnerabilities?limit=500`)).body as any[];

/** Runs ESLint in `checkout` on the sample there; ESLint exits 0 since the rules only warn. */
async function eslintSarif(checkout: string): Promise<string> {
  const out = path.join(dir, `eslint-${path.basename(checkout)}.sarif`);
  const eslint = path.resolve("node_modules/eslint/bin/eslint.js");
  await run(
    process.execPath,
    [eslint, "-c", `${SAMPLE}/eslint.config.mjs`, "-f", "@microsoft/eslint-formatter-sarif", "-o", out, SAMPLE],
    {
      cwd: checkout,
    },
  );
  return readFile(out, "utf8");
}

describe("ESLint's SARIF", () => {
  it("becomes one sast vulnerability per result, with locations relative to the checkout", async () => {
    const text = await eslintSarif(process.cwd());
    const log = JSON.parse(text) as Sarif.Log;
    const runOf = log.runs[0]!;
    const results = runOf.results ?? [];
    // The sample's flaws, as the plugin finds them: if the fixture stops triggering them, this fails.
    expect(results.map((r) => `${r.ruleId} ${r.locations![0]!.physicalLocation!.region!.startLine}`).sort()).toEqual([
      "security/detect-child-process 8",
      "security/detect-eval-with-expression 9",
      "security/detect-non-literal-fs-filename 7",
      "security/detect-possible-timing-attacks 5",
      "security/detect-unsafe-regex 2",
    ]);

    const app = await newApplication("eslint-sarif");
    const res = await upload(app, text, `?checkoutPath=${encodeURIComponent(process.cwd())}`);
    expect(res.status).toBe(202);
    const eslintVersion = JSON.parse(await readFile("node_modules/eslint/package.json", "utf8")).version;
    expect(res.body).toMatchObject({
      scanType: "sast",
      source: { kind: "report", format: "sarif", tool: "ESLint", toolVersion: eslintVersion },
    });
    expect(res.body.summary).toEqual({
      totalFindings: results.length,
      critical: 0,
      high: 0,
      medium: results.length,
      low: 0,
    });

    const vulns = await vulnerabilitiesOf(app);
    expect(vulns).toHaveLength(results.length);
    for (const result of results) {
      const physical = result.locations![0]!.physicalLocation!;
      const uri = physical.artifactLocation!.uri!;
      expect(uri.startsWith("file:///")).toBe(true);
      const location = `${path.relative(process.cwd(), new URL(uri).pathname)}:${physical.region!.startLine}`;
      const rule = runOf.tool.driver.rules!.find((r) => r.id === result.ruleId)!;
      expect(vulns.find((v) => v.location === location)).toMatchObject({
        title: rule.shortDescription!.text,
        description: result.message.text,
        severity: "medium", // level warning, no security-severity
        cvssScore: 4.0,
        cwe: "CWE-0", // the plugin tags no CWE
        cve: null,
        introducedIn: location,
        remediation: `See ${rule.helpUri}`,
        packageName: null,
        packageVersion: null,
        tool: "ESLint",
        status: "open",
      });
    }
  });

  it("keeps its findings' identity when the next run is in another checkout directory", async () => {
    const app = await newApplication("eslint-moved");
    expect(
      (await upload(app, await eslintSarif(process.cwd()), `?checkoutPath=${encodeURIComponent(process.cwd())}`))
        .status,
    ).toBe(202);
    const before = await vulnerabilitiesOf(app);

    const elsewhere = path.join(dir, "another-runner");
    await cp(SAMPLE, path.join(elsewhere, SAMPLE), { recursive: true });
    await symlink(path.resolve("node_modules"), path.join(elsewhere, "node_modules"));
    const moved = await eslintSarif(elsewhere);
    expect(moved).toContain(`file://${elsewhere}`);
    expect((await upload(app, moved, `?checkoutPath=${encodeURIComponent(elsewhere)}`)).status).toBe(202);
    const after = await vulnerabilitiesOf(app);
    expect(after.map((v) => [v.id, v.status])).toEqual(before.map((v) => [v.id, "open"]));
  });
});

describe("ESLint's SARIF when ESLint could not parse a file", () => {
  it("says the tool failed: the upload is refused 422 and the application's ESLint findings stay open", async () => {
    const app = await newApplication("eslint-failed");
    expect(
      (await upload(app, await eslintSarif(process.cwd()), `?checkoutPath=${encodeURIComponent(process.cwd())}`))
        .status,
    ).toBe(202);
    const before = await vulnerabilitiesOf(app);
    expect(before.length).toBeGreaterThan(0);

    // The same checkout, the flaws fixed (their files gone) and one file that does not parse.
    const broken = path.join(dir, "broken-runner");
    await cp(`${SAMPLE}/eslint.config.mjs`, path.join(broken, SAMPLE, "eslint.config.mjs"));
    await writeFile(path.join(broken, SAMPLE, "server.js"), "function (\n");
    await symlink(path.resolve("node_modules"), path.join(broken, "node_modules"));
    const out = path.join(dir, "eslint-broken.sarif");
    const eslint = path.resolve("node_modules/eslint/bin/eslint.js");
    // ESLint exits 1 on the parse error, after writing its report.
    await expect(
      run(
        process.execPath,
        [eslint, "-c", `${SAMPLE}/eslint.config.mjs`, "-f", "@microsoft/eslint-formatter-sarif", "-o", out, SAMPLE],
        { cwd: broken },
      ),
    ).rejects.toMatchObject({ code: 1 });
    const text = await readFile(out, "utf8");
    const log = JSON.parse(text) as Sarif.Log;
    expect(log.runs[0]!.results).toEqual([]);
    expect(log.runs[0]!.invocations![0]!.executionSuccessful).toBe(false);

    const res = await upload(app, text, `?checkoutPath=${encodeURIComponent(broken)}`);
    expect([res.status, res.body.code]).toEqual([422, "tool_failed"]);
    expect(res.body.detail).toMatch(/ESLint's invocation says executionSuccessful: false/);
    expect(res.body.errors).toContainEqual(
      expect.objectContaining({ path: "/runs/0/invocations/0/executionSuccessful" }),
    );
    expect((await vulnerabilitiesOf(app)).map((v) => [v.id, v.status])).toEqual(before.map((v) => [v.id, "open"]));
  });
});

describe("npm sbom's SBOM", () => {
  let bomText: string;
  beforeAll(async () => {
    // npm's own generator (CycloneDX 1.5 JSON), from the lock file.
    const { stdout } = await run(
      "npm",
      ["sbom", "--sbom-format", "cyclonedx", "--omit", "dev", "--package-lock-only"],
      {
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    bomText = stdout;
  });

  it("is a valid report with no vulnerabilities: a completed sca scan with no findings", async () => {
    const app = await newApplication("sbom-only");
    const res = await upload(app, bomText);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      scanType: "sca",
      status: "completed",
      summary: { totalFindings: 0 },
      source: { kind: "report", format: "cyclonedx" },
    });
  });

  it("with vulnerabilities added by a scanner, names each affected component field by field", async () => {
    const bom = JSON.parse(bomText);
    const components = bom.components as { "bom-ref": string; name: string; version: string; purl: string }[];
    // Not koa: npm 11's `sbom --omit dev` leaves out production packages a devDependency also uses
    // (koa and jose, since oidc-provider came in for the tests).
    const undici = components.find((c) => c.name === "undici")!;
    const pg = components.find((c) => c.name === "pg")!;
    expect(undici && pg).toBeTruthy();
    // What a vulnerability scanner enriching the SBOM writes (CycloneDX 1.5 `vulnerabilities`).
    bom.vulnerabilities = [
      {
        "bom-ref": "vuln-1",
        id: "GHSA-test-und1-0001",
        source: { name: "GitHub Advisories", url: "https://github.com/advisories" },
        references: [{ id: "CVE-2099-0001", source: { name: "NVD", url: "https://nvd.nist.gov/" } }],
        ratings: [
          {
            source: { name: "NVD" },
            score: 8.1,
            severity: "high",
            method: "CVSSv31",
            vector: "CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:H/A:H",
          },
          { source: { name: "GitHub" }, severity: "critical", method: "other" },
        ],
        cwes: [601, 79],
        description: "Open redirect in Koa’s ctx.redirect — “back” handling",
        recommendation: "Upgrade undici to 3.3.1",
        tools: { components: [{ type: "application", name: "osv-scanner", version: "2.2.0" }] },
        affects: [{ ref: undici["bom-ref"] }, { ref: pg["bom-ref"] }],
      },
      {
        id: "CVE-2099-0002",
        ratings: [{ severity: "info" }],
        analysis: { state: "in_triage" },
        affects: [{ ref: pg["bom-ref"] }],
      },
      { id: "GHSA-test-none-0003", ratings: [{ severity: "none" }], affects: [{ ref: pg["bom-ref"] }] },
      {
        id: "CVE-2099-0004",
        ratings: [{ severity: "high" }],
        analysis: { state: "not_affected", justification: "code_not_reachable" },
        affects: [{ ref: undici["bom-ref"] }],
      },
    ];
    const app = await newApplication("sbom-vulnerabilities");
    const res = await upload(app, JSON.stringify(bom));
    expect(res.status).toBe(202);
    expect(res.body.source).toEqual({ kind: "report", format: "cyclonedx", tool: "osv-scanner", toolVersion: "2.2.0" });

    const vulns = await vulnerabilitiesOf(app);
    expect(vulns.map((v) => `${v.cve} ${v.packageName}`).sort()).toEqual([
      "CVE-2099-0001 pg",
      "CVE-2099-0001 undici",
      "CVE-2099-0002 pg", // informational, kept as low because it names a CVE
      "CVE-2099-0004 undici", // not_affected: kept, accepted (docs/spec/CONTRACT.md §13)
    ]);
    expect(vulns.find((v) => v.cve === "CVE-2099-0004")).toMatchObject({
      status: "accepted",
      analysis: { state: "not_affected", justification: "code_not_reachable", source: "report" },
    });
    expect(vulns.find((v) => v.cve === "CVE-2099-0002")).toMatchObject({
      status: "in_progress",
      analysis: { state: "in_triage" },
    });
    for (const component of [undici, pg]) {
      expect(vulns.find((v) => v.packageName === component.name && v.cve === "CVE-2099-0001")).toMatchObject({
        title: `GHSA-test-und1-0001 in ${component.name}@${component.version}`,
        description: "Open redirect in Koa’s ctx.redirect — “back” handling",
        severity: "critical", // the highest of the ratings
        cvssScore: 8.1, // the CVSS v3 rating's score
        cwe: "CWE-79",
        packageVersion: component.version,
        location: component.purl,
        introducedIn: `${component.name}@${component.version}`,
        remediation: "Upgrade undici to 3.3.1",
        tool: "osv-scanner",
      });
    }
    expect(vulns.find((v) => v.cve === "CVE-2099-0002")).toMatchObject({
      severity: "low",
      cvssScore: 0.1,
      cwe: "CWE-0",
    });
  });
});
