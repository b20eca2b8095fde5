// A real process kill: the service is started as `node --import tsx src/main.ts`, SIGKILLed mid-scan and
// restarted; the scan it held must finish within the lease timeout. Then SIGTERM mid-scan must
// hand the scan back before the process exits.
import type { ChildProcess } from "node:child_process";
import pg from "pg";
import { mintToken } from "../../src/auth/mint-token.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { spawnReaped } from "../helpers/process-reaper.ts";
import { eventually } from "../helpers/scan-engines.ts";
import { TEST_JWT_SECRET } from "../helpers/test-app.ts";

let database: TestDatabase;
let db: pg.Client;
beforeAll(async () => {
  database = await createTestDatabase();
  db = new pg.Client({ connectionString: database.url });
  await db.connect();
});
afterAll(async () => {
  await db.end();
  await database.drop();
});

interface Service {
  child: ChildProcess;
  baseUrl: string;
  exited: Promise<number | null>;
}

async function startService(): Promise<Service> {
  // tsx as a loader, not its CLI: the CLI runs the service in a child process SIGKILL would not reach.
  const child = spawnReaped(process.execPath, ["--import", "tsx", "src/main.ts"], {
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: database.url,
      PORT: "0",
      HOST: "127.0.0.1",
      AUTH_JWT_SECRET: TEST_JWT_SECRET,
      SCAN_DURATION_MS: "3000",
      SCAN_LEASE_MS: "1000",
      LOG_LEVEL: "info",
      NODE_ENV: "test",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = out.match(/"baseUrl":"(http:\/\/[^"]+)"/);
      if (match) resolve(match[1]!);
    });
    child.stderr!.resume();
    void exited.then(() => reject(new Error(`service exited before listening:\n${out}`)));
  });
  return { child, baseUrl, exited };
}

const scanRow = async (id: string) =>
  (await db.query("SELECT status, lease_owner, run_attempts FROM scans WHERE id = $1", [id])).rows[0] as {
    status: string;
    lease_owner: string | null;
    run_attempts: number;
  };

async function trigger(service: Service, token: string, appId: string, scanType: string): Promise<string> {
  const res = await fetch(`${service.baseUrl}/applications/${appId}/scans`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ scanType }),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { id: string }).id;
}

it("finishes a scan whose service was SIGKILLed after a restart, and SIGTERM hands scans back", async () => {
  const token = await mintToken({ secret: TEST_JWT_SECRET, sub: "crash-test", scopes: ["admin"] });
  const first = await startService();
  const created = await fetch(`${first.baseUrl}/applications`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "crash-app" }),
  });
  const appId = ((await created.json()) as { id: string }).id;
  const scanId = await trigger(first, token, appId, "sast");
  await eventually(async () => (await scanRow(scanId)).status === "running");

  first.child.kill("SIGKILL");
  await first.exited;
  expect(await scanRow(scanId)).toMatchObject({ status: "running", run_attempts: 1 });
  expect((await scanRow(scanId)).lease_owner).not.toBeNull();

  const second = await startService();
  try {
    await eventually(async () => (await scanRow(scanId)).status === "completed", 20_000);
    expect(await scanRow(scanId)).toMatchObject({ run_attempts: 2, lease_owner: null });

    const interrupted = await trigger(second, token, appId, "dast");
    await eventually(async () => (await scanRow(interrupted)).status === "running");
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    expect(await scanRow(interrupted)).toMatchObject({ status: "running", lease_owner: null, run_attempts: 0 });
  } finally {
    second.child.kill("SIGKILL");
  }
}, 90_000);
