// Runs the service as `npm start` does (`node <its flags> dist/main.js`, the compiled build) in a
// child process.
// The jest global setup brings dist/ up to date first (test/helpers/global-setup.ts).
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const MAIN = path.join(ROOT, "dist/main.js");

/** The Node flags package.json's start script gives the service (its heap ceiling). */
export const START_FLAGS: readonly string[] = (() => {
  const { scripts } = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: { start: string } };
  // `exec node …`: the shell gives way to node, so the signals npm forwards reach it.
  const flags = /^exec node (.*)dist\/main\.js$/.exec(scripts.start)?.[1];
  if (flags === undefined) throw new Error(`cannot read the Node flags of the start script "${scripts.start}"`);
  return flags.split(/\s+/).filter(Boolean);
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
  /** Resolves when the process has exited. */
  exited: Promise<number | null>;
}

/** Starts dist/main.js and resolves once /readyz answers 200. */
export async function startServiceProcess(options: {
  env: Record<string, string>;
  cwd?: string;
  timeoutMs?: number;
  /** Extra node options (e.g. --cpu-prof, which NODE_OPTIONS refuses). */
  nodeArgs?: string[];
}): Promise<ServiceProcess> {
  const port = Number(options.env.PORT ?? (await freePort()));
  const env: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", HOST: "127.0.0.1", LOG_LEVEL: "warn", ...options.env, PORT: String(port) };
  const child = spawn(process.execPath, [...START_FLAGS, ...(options.nodeArgs ?? []), MAIN], { cwd: options.cwd ?? ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr!.on("data", (chunk) => (err += String(chunk)));
  child.stdout!.resume();
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  let finished = false;
  void exited.then(() => (finished = true));
  while (true) {
    if (finished) throw new Error(`service exited during start-up:\n${err}`);
    if (await fetch(`${baseUrl}/readyz`).then((r) => r.ok, () => false)) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`service not ready in time:\n${err}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, baseUrl, stderr: () => err, exited };
}
