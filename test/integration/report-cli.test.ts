// `npm run report` (src/cli/report.ts), as a CI job runs it: a report file sent gzip-compressed to a
// running service, a new scan or a triggered one completed, and a clear message when it is refused.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

const run = promisify(execFile);

let t: TestApp;
let dir: string;
beforeAll(async () => {
  t = await startTestApp({ SCAN_DURATION_MS: "0", SCAN_ENGINES: "sca:external" });
  dir = await mkdtemp(path.join(tmpdir(), "report-cli-"));
});
afterAll(async () => {
  await t.close();
  await rm(dir, { recursive: true, force: true });
});

/** A Grype report of one match, as `grype dir:. -o json` writes it. */
const grype = (id: string, pkg: string, version: string) => ({
  matches: [
    {
      vulnerability: {
        id,
        severity: "High",
        description: `${id} in ${pkg}`,
        cvss: [{ version: "3.1", metrics: { baseScore: 7.5 } }],
        fix: { versions: ["9.9.9"], state: "fixed" },
      },
      relatedVulnerabilities: [],
      artifact: { name: pkg, version, type: "npm", purl: `pkg:npm/${pkg}@${version}` },
    },
  ],
  source: { type: "directory", target: "." },
  descriptor: { name: "grype", version: "0.87.0" },
});

async function cli(args: string[], env: Record<string, string> = {}) {
  const file = path.resolve("src/cli/report.ts");
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", file, ...args], {
      env: {
        PATH: process.env["PATH"] ?? "",
        APPSEC_URL: t.baseUrl,
        APPSEC_TOKEN: await t.token(["scans:write"]),
        ...env,
      },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

it("uploads a report as a new scan and prints its summary and address", async () => {
  const app = (await t.request("POST", "/applications", { body: { name: "cli-upload" } })).body.id as string;
  const file = path.join(dir, "grype.json");
  await writeFile(file, JSON.stringify(grype("GHSA-aaaa-bbbb-cccc", "left-pad", "1.0.0")));
  const { code, stdout, stderr } = await cli(["--app", app, "--file", file, "--triggered-by", "ci-job-1"]);
  expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  const scanId = /^Scan (\S+) completed \(sca, Grype\): 1 findings: 0 critical, 1 high, 0 medium, 0 low$/m.exec(
    stdout,
  )?.[1];
  expect(scanId).toBeDefined();
  expect(stdout).toContain(`${t.baseUrl}/applications/${app}/scans/${scanId}`);
  const scan = (await t.request("GET", `/applications/${app}/scans/${scanId}`)).body;
  expect(scan).toMatchObject({
    triggeredBy: "ci-job-1",
    source: { format: "grype", tool: "Grype", toolVersion: "0.87.0" },
  });
});

it("completes a triggered scan with --scan", async () => {
  const app = (await t.request("POST", "/applications", { body: { name: "cli-triggered" } })).body.id as string;
  const scan = (await t.request("POST", `/applications/${app}/scans`, { body: { scanType: "sca" } })).body;
  const file = path.join(dir, "triggered.json");
  await writeFile(file, JSON.stringify(grype("CVE-2024-0001", "minimist", "0.0.8")));
  const { code, stdout } = await cli(["--app", app, "--file", file, "--scan", scan.id]);
  expect(code).toBe(0);
  expect(stdout).toMatch(new RegExp(`^Scan ${scan.id} completed`, "m"));
  const again = await cli(["--app", app, "--file", file, "--scan", scan.id]);
  expect(again.code).toBe(1);
  expect(again.stderr).toMatch(/^409 .*already completed/);
});

it("says what is wrong with a refused report, its token or its arguments", async () => {
  const app = (await t.request("POST", "/applications", { body: { name: "cli-refused" } })).body.id as string;
  const file = path.join(dir, "bad.json");
  const bad = grype("CVE-2024-0002", "qs", "6.0.0") as any;
  bad.matches[0].vulnerability.severity = "Severe";
  await writeFile(file, JSON.stringify(bad));
  const refused = await cli(["--app", app, "--file", file]);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/^400 /);
  expect(refused.stderr).toContain("/matches/0/vulnerability/severity:");

  expect((await cli(["--app", app, "--file", file], { APPSEC_TOKEN: "" })).stderr).toContain("APPSEC_TOKEN");
  expect((await cli(["--app", app, "--file", file], { APPSEC_TOKEN: await t.token(["scans:read"]) })).stderr).toMatch(
    /^403 /,
  );
  expect((await cli(["--file", file])).stderr).toContain("Usage: npm run report");
  expect((await cli(["--app", app, "--file", path.join(dir, "missing.json")])).stderr).toContain("Cannot read");
});
