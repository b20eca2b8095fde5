// Machines without shared secrets (docs/spec/CONTRACT.md §18): the agent and `npm run report` take
// their tokens from the identity provider by the client credentials grant, and renew them before
// they expire: here tokens of 4 s, and a scan that takes 6 s.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { eventually } from "../helpers/scan-engines.ts";
import { startTestProvider, type MachineClient, type TestProvider } from "../helpers/oidc-provider.ts";
import { spawnReaped } from "../helpers/process-reaper.ts";
import { sarifLog } from "../helpers/scanner-reports.ts";
import { ROOT } from "../helpers/service-process.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

const run = promisify(execFile);
const AGENT = path.join(ROOT, "dist/agent/main.js");
const TOKEN_SECONDS = 4;

const agentClient: MachineClient = {
  clientId: "scan-agent-1",
  clientSecret: "agent-secret-0123456789",
  scope: "scans:run",
};
const ciClient: MachineClient = { clientId: "ci-pipeline", clientSecret: "ci-secret-0123456789", scope: "scans:write" };

let provider: TestProvider;
let t: TestApp;
let dir: string;
beforeAll(async () => {
  provider = await startTestProvider({ machines: [agentClient, ciClient], accessTokenTtlSeconds: TOKEN_SECONDS });
  t = await startTestApp({
    OIDC_ISSUER: provider.issuer,
    AUTH_AUDIENCE: provider.resource,
    SCAN_DURATION_MS: "0",
    SCAN_ENGINES: "sast:external,sca:external",
  });
  dir = await mkdtemp(path.join(tmpdir(), "machine-tokens-"));
});
afterAll(async () => {
  await t.close();
  await provider.close();
  await rm(dir, { recursive: true, force: true });
});

const credentials = (client: MachineClient) => ({
  OIDC_ISSUER: provider.issuer,
  OIDC_CLIENT_ID: client.clientId,
  OIDC_CLIENT_SECRET: client.clientSecret,
  OIDC_RESOURCE: provider.resource,
});

const newApplication = async (name: string) =>
  (await t.request("POST", "/applications", { body: { name } })).body.id as string;

it("runs the agent on client-credential tokens that expire during the scan", async () => {
  const app = await newApplication("machine-agent");
  const scan = (await t.request("POST", `/applications/${app}/scans`, { body: { scanType: "sast" } })).body.id;
  const report = path.join(dir, "slow.sarif");
  await writeFile(report, JSON.stringify(sarifLog([{ findings: [1, 2] }])));
  const config = path.join(dir, "agent.json");
  // The tool takes longer than a token lives: the report goes up with a renewed one.
  await writeFile(
    config,
    JSON.stringify({ executors: { sast: { command: ["sh", "-c", 'sleep 6; cp "$0" "$1"', report, "{report}"] } } }),
  );
  const child = spawnReaped(process.execPath, [AGENT, "--config", config, "--name", "machine-agent"], {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: dir,
      APPSEC_URL: t.baseUrl,
      LOG_LEVEL: "debug",
      ...credentials(agentClient),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk) => (output += String(chunk)));
  child.stderr!.on("data", (chunk) => (output += String(chunk)));
  try {
    const done = await eventually(async () => {
      const s = (await t.request("GET", `/applications/${app}/scans/${scan}`)).body;
      return s.status === "completed" && s;
    }, 30_000).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}\nagent output:\n${output}`);
    });
    expect(done.summary.totalFindings).toBe(2);
    expect(provider.tokenRequests(agentClient.clientId)).toBeGreaterThanOrEqual(2);
    expect(output).not.toContain(agentClient.clientSecret);
  } finally {
    child.kill("SIGKILL");
  }
}, 60_000);

async function report(args: string[], env: Record<string, string>) {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      ["--import", "tsx", path.join(ROOT, "src/cli/report.ts"), ...args],
      {
        env: { PATH: process.env.PATH ?? "", APPSEC_URL: t.baseUrl, ...env },
      },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

it("uploads a report from CI with a client-credential token", async () => {
  const app = await newApplication("machine-ci");
  const file = path.join(dir, "ci.sarif");
  await writeFile(file, JSON.stringify(sarifLog([{ findings: [1] }])));
  const before = provider.tokenRequests(ciClient.clientId);
  const res = await report(["--app", app, "--file", file], credentials(ciClient));
  expect(res.stderr).toBe("");
  expect(res.code).toBe(0);
  expect(provider.tokenRequests(ciClient.clientId)).toBe(before + 1);
  const scans = (await t.request("GET", `/applications/${app}/scans`)).body;
  expect(scans).toHaveLength(1);
  expect(scans[0]).toMatchObject({ status: "completed", summary: { totalFindings: 1 } });
});

it("says what is missing or refused, and never prints the secret", async () => {
  const partial = await report(["--app", "x", "--file", "y"], { OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: "ci" });
  expect(partial.code).toBe(2);
  expect(partial.stderr).toContain("Set OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET together");

  const file = path.join(dir, "refused.sarif");
  await writeFile(file, JSON.stringify(sarifLog([{ findings: [1] }])));
  const wrongSecret = "not-the-secret-4242";
  const refused = await report(["--app", await newApplication("machine-refused"), "--file", file], {
    ...credentials(ciClient),
    OIDC_CLIENT_SECRET: wrongSecret,
  });
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain(`Could not get a token from the client credentials of ${ciClient.clientId}`);
  expect(refused.stderr).toContain("invalid_client");
  expect(refused.stderr).not.toContain(wrongSecret);
});
