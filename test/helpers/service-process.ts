// Runs the real service entry point (src/main.ts) as a child process, as `npm start` does.
import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
// `node --import tsx` keeps the service in this one process (the tsx CLI would run it in a
// grandchild and relay signals), so SIGTERM and SIGKILL reach the service itself, as with npm start.
const TSX_LOADER = pathToFileURL(path.join(ROOT, "node_modules/tsx/dist/loader.mjs")).href;
const MAIN = path.join(ROOT, "src/main.ts");

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

/** Starts src/main.ts and resolves once /readyz answers 200. */
export async function startServiceProcess(options: {
  env: Record<string, string>;
  cwd?: string;
  timeoutMs?: number;
  /** Extra node options (e.g. --cpu-prof, which NODE_OPTIONS refuses). */
  nodeArgs?: string[];
}): Promise<ServiceProcess> {
  const port = Number(options.env.PORT ?? (await freePort()));
  const env: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", HOST: "127.0.0.1", LOG_LEVEL: "warn", ...options.env, PORT: String(port) };
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), "--import", TSX_LOADER, MAIN], { cwd: options.cwd ?? ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
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
