// The agent (`dist/agent/main.js`, the `appsec-agent` bin) as its own process against a real
// service: real git clones of a repository this test makes (served over file:// through git's own
// url.<base>.insteadOf), real ESLint with the SARIF formatter, real process groups and signals.
import { execFile, type ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { plantedAlerts, plantedSite } from "../helpers/dast-sites.ts";
import { spawnReaped } from "../helpers/process-reaper.ts";
import { requireTool } from "../helpers/required-tool.ts";
import { eventually } from "../helpers/scan-engines.ts";
import { ROOT } from "../helpers/service-process.ts";
import { startTargetSite, type TargetSite } from "../helpers/target-site.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

requireTool("git");

const run = promisify(execFile);
const AGENT = path.join(ROOT, "dist/agent/main.js");
/** Where the applications say their repositories are; git rewrites it to the test's directory. */
const GIT_HOST = "https://git.example.test/";

let t: TestApp;
let dir: string;
let repos: string;
beforeAll(async () => {
  t = await startTestApp({ SCAN_DURATION_MS: "0", SCAN_ENGINES: "sast:external,sca:external,dast:external" });
  dir = await mkdtemp(path.join(tmpdir(), "scan-agent-"));
  repos = path.join(dir, "repos");
  await mkdir(repos);
});
afterAll(async () => {
  await t.close();
  await rm(dir, { recursive: true, force: true });
});

let n = 0;
const newApplication = async (extra: Record<string, unknown> = {}) =>
  (await t.request("POST", "/applications", { body: { name: `agent-${++n}`, ...extra } })).body.id as string;
const trigger = async (app: string, scanType = "sast") =>
  (await t.request("POST", `/applications/${app}/scans`, { body: { scanType } })).body.id as string;
const scanOf = async (app: string, scan: string) => (await t.request("GET", `/applications/${app}/scans/${scan}`)).body;
const untilStatus = (app: string, scan: string, status: string, timeoutMs = 20_000) =>
  eventually(async () => {
    const s = await scanOf(app, scan);
    return s.status === status && s;
  }, timeoutMs);

/** A git repository made with real git from `files`, committed; returns its repoUrl. */
async function gitRepository(name: string, files: Record<string, string>): Promise<string> {
  const repo = path.join(repos, `${name}.git`);
  await mkdir(repo);
  for (const [file, text] of Object.entries(files)) await writeFile(path.join(repo, file), text);
  const git = (...args: string[]) =>
    run("git", ["-c", "user.name=Test", "-c", "user.email=test@example.test", ...args], { cwd: repo });
  await git("init", "--quiet", "--initial-branch=main");
  await git("add", "--all");
  await git("commit", "--quiet", "-m", "initial");
  return `${GIT_HOST}${name}.git`;
}

interface AgentOptions {
  sub?: string;
  name?: string;
  /** Where it finds the service; the service itself when absent. */
  url?: string;
}

interface AgentProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/** Starts the agent with this configuration, its token scoped scans:run only. */
async function startAgent(
  config: Record<string, unknown>,
  options: AgentOptions = {},
): Promise<AgentProcess & { token: string }> {
  const file = path.join(dir, `agent-${++n}.json`);
  await writeFile(file, JSON.stringify(config));
  const token = await t.token(["scans:run"], options.sub ?? "agent-test");
  const child = spawnReaped(process.execPath, [AGENT, "--config", file, "--name", options.name ?? `test-agent-${n}`], {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: dir,
      APPSEC_URL: options.url ?? t.baseUrl,
      APPSEC_TOKEN: token,
      LOG_LEVEL: "debug",
      // The repositories "on the git host" are this test's directories.
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: `url.file://${repos}/.insteadOf`,
      GIT_CONFIG_VALUE_0: GIT_HOST,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk) => (output += String(chunk)));
  child.stderr!.on("data", (chunk) => (output += String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => output, exited, token };
}

const running: AgentProcess[] = [];
async function agentWith(config: Record<string, unknown>, options?: AgentOptions) {
  const agent = await startAgent(config, options);
  running.push(agent);
  return agent;
}
afterEach(async () => {
  for (const agent of running.splice(0)) {
    agent.child.kill("SIGKILL");
    await agent.exited;
  }
});

/** A fresh directory the agent makes its work directories in. */
async function workRoot(): Promise<string> {
  const root = path.join(dir, `work-${++n}`);
  await mkdir(root);
  return root;
}

/** True while the process exists and is not a zombie. */
async function alive(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
  return stat !== null && !/^\d+ \(.*\) Z /.test(stat);
}

const sarif = JSON.stringify({
  version: "2.1.0",
  runs: [
    {
      tool: { driver: { name: "ShellScanner", version: "1.0" } },
      results: [
        {
          ruleId: "x/one",
          level: "error",
          message: { text: "one" },
          locations: [{ physicalLocation: { artifactLocation: { uri: "a.js" }, region: { startLine: 3 } } }],
        },
      ],
    },
  ],
});

describe("a command executor running real ESLint on a real git repository", () => {
  it("clones the repository, runs the tool, uploads its SARIF: the scan completes with the findings, the work directory goes", async () => {
    const sample = path.join(ROOT, "test/fixtures/eslint-sample");
    const files: Record<string, string> = { ".gitignore": "node_modules\n" };
    for (const file of await readdir(sample)) files[file] = await readFile(path.join(sample, file), "utf8");
    const repoUrl = await gitRepository("eslint-sample", files);
    const app = await newApplication({ repoUrl });
    const scan = await trigger(app);
    const work = await workRoot();
    // As a CI job installs the project's dependencies before linting, the command links this
    // project's (ESLint, eslint-plugin-security, the SARIF formatter) into the clone.
    const lint =
      'ln -s "$0/node_modules" node_modules && exec "$1" node_modules/eslint/bin/eslint.js -c eslint.config.mjs -f @microsoft/eslint-formatter-sarif -o "$2" "$3"';
    await agentWith({
      executors: {
        sast: {
          command: ["sh", "-c", lint, ROOT, process.execPath, "{report}", "{source}"],
          format: "sarif",
          timeoutSeconds: 120,
        },
      },
      workDir: work,
    });

    const done = await untilStatus(app, scan, "completed", 60_000);
    expect(done).toMatchObject({
      scanType: "sast",
      failure: null,
      source: { kind: "report", format: "sarif", tool: "ESLint" },
      summary: { totalFindings: 5, medium: 5 },
    });
    const vulns = (await t.request("GET", `/applications/${app}/vulnerabilities?limit=50`)).body as any[];
    const found = vulns.map((v) => `${/rules\/([\w-]+)/.exec(v.remediation)?.[1]} ${v.location}`).sort();
    // Locations relative to the clone: the agent sent it as checkoutPath.
    expect(found).toEqual([
      "detect-child-process server.js:8",
      "detect-eval-with-expression server.js:9",
      "detect-non-literal-fs-filename server.js:7",
      "detect-possible-timing-attacks auth.js:5",
      "detect-unsafe-regex auth.js:2",
    ]);
    for (const v of vulns) expect(v).toMatchObject({ scanId: scan, tool: "ESLint", status: "open", scanType: "sast" });
    await eventually(async () => (await readdir(work)).length === 0);
  }, 90_000);
});

describe("tool outcomes", () => {
  it("fails the scan with the tool's last stderr lines when it exits non-zero without a report", async () => {
    const app = await newApplication();
    const scan = await trigger(app);
    const work = await workRoot();
    const script =
      'for i in $(seq 1 30); do echo "progress $i" >&2; done; echo "error: rule file not found: p/owasp" >&2; exit 7';
    const agent = await agentWith({
      executors: { sast: { command: ["sh", "-c", script], timeoutSeconds: 60 } },
      workDir: work,
    });
    const failed = await untilStatus(app, scan, "failed");
    const lines = failed.failure.reason.split("\n");
    expect(lines[0]).toBe("sh exited with code 7 without writing a report:");
    expect(lines.slice(1)).toEqual([
      ...Array.from({ length: 19 }, (_, i) => `progress ${i + 12}`),
      "error: rule file not found: p/owasp",
    ]);
    await eventually(async () => (await readdir(work)).length === 0);
    // The token never reaches the logs.
    expect(agent.output()).not.toContain(agent.token);
    expect(agent.output()).toContain('"msg":"scan failed"');
  });

  it("uploads a report that a tool exiting non-zero wrote, and takes stdout as the report when there is no {report}", async () => {
    const app = await newApplication();
    const sast = await trigger(app, "sast");
    const sca = await trigger(app, "sca");
    const work = await workRoot();
    await writeFile(path.join(dir, "found.sarif"), sarif);
    await agentWith({
      executors: {
        sast: { command: ["sh", "-c", 'cp "$0" "$1"; exit 1', path.join(dir, "found.sarif"), "{report}"] },
        sca: { command: ["cat", path.join(dir, "found.sarif")], format: "sarif" },
      },
      concurrency: 2,
      workDir: work,
    });
    for (const scan of [sast, sca]) {
      expect(await untilStatus(app, scan, "completed")).toMatchObject({
        summary: { totalFindings: 1, high: 1 },
        source: { tool: "ShellScanner" },
      });
    }
    await eventually(async () => (await readdir(work)).length === 0);
  });

  it("kills the tool's whole process group on timeout, SIGTERM then SIGKILL, and fails the scan", async () => {
    const app = await newApplication();
    const scan = await trigger(app);
    const work = await workRoot();
    const pids = path.join(dir, `pids-${n}`);
    await mkdir(pids);
    // Both ignore SIGTERM (the trap is inherited), so only the SIGKILL after the grace ends them.
    const script = `trap '' TERM; sleep 300 & echo $! > ${pids}/child; echo $$ > ${pids}/parent; wait`;
    await agentWith({ executors: { sast: { command: ["sh", "-c", script], timeoutSeconds: 1 } }, workDir: work });
    const [parent, child] = await eventually(async () => {
      const read = await Promise.all(
        ["parent", "child"].map((f) => readFile(path.join(pids, f), "utf8").then(Number, () => 0)),
      );
      return read.every((pid) => pid > 0) && read;
    });
    expect(await alive(parent!)).toBe(true);
    expect(await alive(child!)).toBe(true);
    const failed = await untilStatus(app, scan, "failed", 20_000);
    expect(failed.failure.reason).toBe("sh timed out after 1 s (its process group was killed)");
    expect(await alive(parent!)).toBe(false);
    expect(await alive(child!)).toBe(false);
    await eventually(async () => (await readdir(work)).length === 0);
  }, 30_000);

  it("fails the scan when the application has no repoUrl to clone, and when the clone fails", async () => {
    const noRepo = await newApplication();
    const scan1 = await trigger(noRepo);
    const missing = await newApplication({ repoUrl: `${GIT_HOST}does-not-exist.git` });
    const scan2 = await trigger(missing);
    await agentWith({
      executors: { sast: { command: ["true", "{source}"] } },
      concurrency: 2,
      workDir: await workRoot(),
    });
    expect((await untilStatus(noRepo, scan1, "failed")).failure.reason).toBe(
      "The application has no repoUrl to clone for {source} in: true {source}",
    );
    const reason = (await untilStatus(missing, scan2, "failed")).failure.reason as string;
    expect(reason).toMatch(
      /^Cloning https:\/\/git\.example\.test\/does-not-exist\.git failed: git exited with code 128\n/,
    );
    expect(reason).toContain("does-not-exist.git");
  });
});

describe("agents that stop", () => {
  it("a killed agent's scan goes back to the queue when its lease lapses and another agent completes it", async () => {
    const app = await newApplication();
    const scan = await trigger(app);
    const pidFile = path.join(dir, `killed-${n}.pid`);
    const first = await agentWith(
      {
        executors: { sast: { command: ["sh", "-c", `echo $$ > ${pidFile}; exec sleep 300`] } },
        leaseSeconds: 30,
        workDir: await workRoot(),
      },
      { sub: "agent-a" },
    );
    const toolPid = await eventually(async () => Number(await readFile(pidFile, "utf8").catch(() => "")) || null);
    first.child.kill("SIGKILL");
    await first.exited;
    process.kill(-toolPid, "SIGKILL"); // its orphaned tool: nobody is left to end it
    const held = await t.app.db.prisma.scan.findUniqueOrThrow({ where: { id: scan } });
    expect(held).toMatchObject({ status: "running", leaseOwner: "agent-a", runAttempts: 1 });
    // Thirty seconds pass (the lease, compressed).
    await t.app.db.prisma.$executeRaw`UPDATE scans SET lease_expires_at = now() WHERE id = ${scan}::uuid`;

    await writeFile(path.join(dir, "second.sarif"), sarif);
    await agentWith(
      { executors: { sast: { command: ["cp", path.join(dir, "second.sarif"), "{report}"] } } },
      { sub: "agent-b" },
    );
    expect(await untilStatus(app, scan, "completed")).toMatchObject({ failure: null, summary: { totalFindings: 1 } });
    expect(await t.app.db.prisma.scan.findUniqueOrThrow({ where: { id: scan } })).toMatchObject({
      runAttempts: 2,
      leaseOwner: null,
    });
    expect(await t.app.db.prisma.event.count({ where: { applicationId: app, type: "scan.started" } })).toBe(2);
  });

  it("on SIGTERM finishes a scan that ends within the grace, then exits 0", async () => {
    const app = await newApplication();
    const scan = await trigger(app);
    const work = await workRoot();
    await writeFile(path.join(dir, "slow.sarif"), sarif);
    const started = path.join(dir, `started-${n}`);
    const agent = await agentWith({
      executors: {
        sast: {
          command: ["sh", "-c", `touch ${started}; sleep 1; cp "$0" "$1"`, path.join(dir, "slow.sarif"), "{report}"],
        },
      },
      shutdownGraceSeconds: 30,
      workDir: work,
    });
    await eventually(async () =>
      readFile(started).then(
        () => true,
        () => false,
      ),
    );
    agent.child.kill("SIGTERM");
    expect(await agent.exited).toBe(0);
    expect((await scanOf(app, scan)).status).toBe("completed");
    expect(await readdir(work)).toEqual([]);
  });

  it("on SIGTERM hands back a scan still running when the grace is over: queued again, uncounted, tool killed, exit 0", async () => {
    const app = await newApplication();
    const scan = await trigger(app);
    const work = await workRoot();
    const pidFile = path.join(dir, `graceful-${n}.pid`);
    const agent = await agentWith({
      executors: { sast: { command: ["sh", "-c", `echo $$ > ${pidFile}; exec sleep 300`] } },
      shutdownGraceSeconds: 1,
      workDir: work,
    });
    const toolPid = await eventually(async () => Number(await readFile(pidFile, "utf8").catch(() => "")) || null);
    agent.child.kill("SIGTERM");
    expect(await agent.exited).toBe(0);
    expect(await t.app.db.prisma.scan.findUniqueOrThrow({ where: { id: scan } })).toMatchObject({
      status: "queued",
      runAttempts: 0,
      leaseOwner: null,
      startedAt: null,
    });
    expect(await alive(toolPid)).toBe(false);
    expect(await readdir(work)).toEqual([]);
    expect(agent.output()).toContain("scan handed back to the queue");
  });

  it("an idle agent stops claiming on SIGTERM at once and exits 0", async () => {
    const agent = await agentWith({ executors: { sca: { command: ["true"] } } });
    await eventually(async () => agent.output().includes("waiting for scans"));
    const stoppedAt = Date.now();
    agent.child.kill("SIGINT");
    expect(await agent.exited).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(5000);
  });
});

/** The service behind a proxy that answers report uploads 503 (a failure worth trying again), counting them. */
async function refusingReports(): Promise<{ url: string; refused: () => number; close: () => Promise<void> }> {
  const service = new URL(t.baseUrl);
  let refused = 0;
  const proxy = http.createServer((req, res) => {
    if (req.method === "POST" && new URL(req.url!, service).pathname.endsWith("/report")) {
      req.resume();
      req.once("end", () => {
        refused++;
        res.writeHead(503, { "content-type": "application/problem+json", "retry-after": "1" });
        res.end(
          JSON.stringify({ type: "about:blank", title: "Service Unavailable", status: 503, code: "unavailable" }),
        );
      });
      return;
    }
    const upstream = http.request(
      service,
      { method: req.method, path: req.url, headers: { ...req.headers, host: service.host } },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.once("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    refused: () => refused,
    close: () => {
      proxy.closeAllConnections();
      return new Promise((resolve) => proxy.close(() => resolve()));
    },
  };
}

describe("report uploads that fail", () => {
  it("stops waiting to try again when the agent gives up on its work: the scan goes back to the queue at once", async () => {
    const proxy = await refusingReports();
    try {
      const app = await newApplication();
      const scan = await trigger(app);
      await writeFile(path.join(dir, "refused.sarif"), sarif);
      const agent = await agentWith(
        {
          executors: { sast: { command: ["cp", path.join(dir, "refused.sarif"), "{report}"] } },
          shutdownGraceSeconds: 0,
        },
        { url: proxy.url },
      );
      // Refused twice: the agent now waits 2 s before its third and last attempt.
      await eventually(async () => proxy.refused() === 2 && agent.output().includes('"attempt":2'));
      const stoppedAt = Date.now();
      agent.child.kill("SIGTERM");
      expect(await agent.exited).toBe(0);
      const stoppedIn = Date.now() - stoppedAt;
      expect(agent.output()).toContain("scan handed back to the queue");
      expect(proxy.refused()).toBe(2);
      expect(await t.app.db.prisma.scan.findUniqueOrThrow({ where: { id: scan } })).toMatchObject({
        status: "queued",
        runAttempts: 0,
        leaseOwner: null,
      });
      // Not after the rest of the 2 s wait: the wait ends with the work.
      expect(stoppedIn).toBeLessThan(1500);
    } finally {
      await proxy.close();
    }
  });
});

describe("the baseline executor: the built-in passive DAST from the agent's network", () => {
  let site: TargetSite;
  beforeAll(async () => {
    site = await startTargetSite(plantedSite);
  });
  afterAll(() => site.close());

  it("crawls the application's serviceUrl and uploads its ZAP report: each planted defect is found where it is planted", async () => {
    const app = await newApplication({ serviceUrl: site.url("/") });
    const scan = await trigger(app, "dast");
    await agentWith({
      executors: { dast: { engine: "baseline", allowPrivateTargets: true } },
      workDir: await workRoot(),
    });

    const done = await untilStatus(app, scan, "completed");
    expect(done).toMatchObject({
      failure: null,
      source: { kind: "report", format: "zap", tool: "appsec-baseline", toolVersion: "1.0.0" },
    });
    const vulns = (await t.request("GET", `/applications/${app}/vulnerabilities?limit=500`)).body as Array<{
      title: string;
      location: string;
    }>;
    const found: Record<string, string[]> = {};
    for (const v of vulns) (found[v.title] ??= []).push(new URL(v.location).pathname);
    for (const paths of Object.values(found)) paths.sort();
    // Rules that fire on every page (CSP, X-Content-Type-Options, …) are the planted site's too; each planted one is where it was planted.
    for (const [alert, paths] of Object.entries(plantedAlerts("http")))
      expect(found[alert]).toEqual(expect.arrayContaining(paths));
  });

  it("keeps to its target policy: a loopback serviceUrl fails the scan with the reason unless allowed", async () => {
    const app = await newApplication({ serviceUrl: site.url("/") });
    const scan = await trigger(app, "dast");
    const requestsBefore = site.requests.length;
    await agentWith({ executors: { dast: { engine: "baseline" } }, workDir: await workRoot() });

    const failed = await untilStatus(app, scan, "failed");
    expect(failed.failure.reason).toContain("127.0.0.1");
    expect(failed.failure.reason).toMatch(/not a public address|must not point/);
    expect(site.requests.length).toBe(requestsBefore);
  });
});

describe("configuration and refusals", () => {
  const runAgent = async (config: unknown, env: Record<string, string> = {}) => {
    const file = path.join(dir, `bad-${++n}.json`);
    await writeFile(file, typeof config === "string" ? config : JSON.stringify(config));
    try {
      await run(process.execPath, [AGENT, "--config", file], {
        env: {
          PATH: process.env.PATH ?? "",
          APPSEC_URL: t.baseUrl,
          APPSEC_TOKEN: await t.token(["scans:run"]),
          LOG_LEVEL: "silent",
          ...env,
        },
      });
      return { code: 0, stderr: "" };
    } catch (err) {
      return { code: (err as { code: number }).code, stderr: (err as { stderr: string }).stderr };
    }
  };

  it("says what is wrong with a baseline executor's target allow-list", async () => {
    const res = await runAgent({ executors: { dast: { engine: "baseline", targetAllow: ["10.0.0.0/33"] } } });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('"10.0.0.0/33" has no valid prefix length (0-32)');
    expect(res.stderr).toContain("at executors.dast.targetAllow");
  });

  it("says which field of the file is wrong", async () => {
    const res = await runAgent({
      executors: { sast: { command: ["semgrep", "--output", "{reprot}"], timeoutSeconds: 0 } },
      concurrency: 0,
    });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("is not a valid agent configuration");
    expect(res.stderr).toContain("Unknown placeholder {reprot}: use {source}, {serviceUrl} or {report}");
    expect(res.stderr).toContain("at executors.sast.command");
    expect(res.stderr).toContain("at concurrency");
    expect((await runAgent("{not json")).stderr).toContain("is not JSON");
    expect((await runAgent({ executors: { sast: { command: ["x"] } } }, { APPSEC_TOKEN: "" })).stderr).toContain(
      "Set APPSEC_TOKEN",
    );
  });

  it("stops with the service's reason when it will not hand these scan types to agents, or refuses the token", async () => {
    const notExternal = await runAgent({ executors: { container: { command: ["true"] } } });
    expect(notExternal.code).toBe(1);
    expect(notExternal.stderr).toContain(
      "scanTypes[0]: container scans are run by the service itself; set SCAN_ENGINES=container:external to hand them to agents",
    );
    const reader = await runAgent(
      { executors: { sast: { command: ["true"] } } },
      { APPSEC_TOKEN: await t.token(["scans:read"]) },
    );
    expect(reader.code).toBe(1);
    expect(reader.stderr).toContain("claim: 403");
  });
});
