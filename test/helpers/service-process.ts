// Runs the service as `npm start` does (`node <its flags> dist/main.js`, the compiled build) in a
// child process, or runs `npm start` itself; either is killed if the test process ends first
// (test/helpers/process-reaper.ts). The process project's global set-up brings dist/ up to date
// first (test/helpers/global-setup/process.ts).
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { spawnReaped } from "./process-reaper.ts";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const MAIN = path.join(ROOT, "dist/main.js");

/** The Node flags package.json's start script gives the service (its heap ceiling, its preload). */
export const START_FLAGS: readonly string[] = (() => {
  const { scripts } = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
    scripts: { start: string };
  };
  // `exec node …`: the shell gives way to node, so the signals npm forwards reach it.
  const flags = /^exec node (.*)dist\/main\.js$/.exec(scripts.start)?.[1];
  if (flags === undefined) throw new Error(`cannot read the Node flags of the start script "${scripts.start}"`);
  // A file the flags name (`--require ./dist/…`) is found from the repository, whatever the child's cwd.
  return flags
    .split(/\s+/)
    .filter(Boolean)
    .map((flag) => (flag.startsWith("./") ? path.join(ROOT, flag) : flag));
})();

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface ServiceProcess {
  child: ChildProcess;
  baseUrl: string;
  /** Everything the process wrote to stderr so far (the start-up banner goes there). */
  stderr(): string;
  /** The structured log lines (stdout) so far; other lines (npm's banner) are left out. */
  logs(): LogLine[];
  /** Resolves when the process has exited. */
  exited: Promise<number | null>;
}

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

interface StartOptions {
  env: Record<string, string>;
  timeoutMs?: number;
}

async function serviceEnv(given: Record<string, string>): Promise<{ env: Record<string, string>; port: number }> {
  const port = Number(given.PORT ?? (await freePort()));
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
    ...given,
    PORT: String(port),
  };
  return { env, port };
}

/** A JSON request to `service` with a bearer token; the answer's status and parsed body. */
export async function callService(
  service: { baseUrl: string },
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const res = await fetch(service.baseUrl + path, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** Starts dist/main.js and resolves once /readyz answers 200. */
export async function startServiceProcess(
  options: StartOptions & {
    cwd?: string;
    /** Extra node options (e.g. --cpu-prof, which NODE_OPTIONS refuses). */
    nodeArgs?: string[];
    /** Another build's main.js (a benchmark's "before"); default this repository's dist/main.js. */
    main?: string;
  },
): Promise<ServiceProcess> {
  const { env, port } = await serviceEnv(options.env);
  const child = spawnReaped(process.execPath, [...START_FLAGS, ...(options.nodeArgs ?? []), options.main ?? MAIN], {
    cwd: options.cwd ?? ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return untilReady(child, port, options.timeoutMs);
}

/**
 * Runs `npm start` in the repository, in a process group of its own (which npm leads), as a
 * terminal would: a test can then press Ctrl-C by sending SIGINT to the whole group.
 */
export async function startWithNpm(options: StartOptions): Promise<ServiceProcess> {
  const { env, port } = await serviceEnv(options.env);
  const child = spawnReaped("npm", ["start"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  return untilReady(child, port, options.timeoutMs);
}

async function untilReady(child: ChildProcess, port: number, timeoutMs = 60_000): Promise<ServiceProcess> {
  let err = "";
  child.stderr!.on("data", (chunk) => (err += String(chunk)));
  const lines: LogLine[] = [];
  let partial = "";
  child.stdout!.on("data", (chunk) => {
    const text = partial + String(chunk);
    const complete = text.split("\n");
    partial = complete.pop()!;
    for (const line of complete) if (line.startsWith("{")) lines.push(JSON.parse(line) as LogLine); // pino writes whole lines
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  let finished = false;
  void exited.then(() => (finished = true));
  while (true) {
    if (finished) throw new Error(`service exited during start-up:\n${err}`);
    if (
      await fetch(`${baseUrl}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`service not ready in time:\n${err}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, baseUrl, stderr: () => err, logs: () => lines, exited };
}
