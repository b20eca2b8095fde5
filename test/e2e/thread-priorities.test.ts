// Which of the service's threads give way (src/platform-threads-priority.cts and
// scans/reports/background-priority.ts): the threads Node's platform starts before any JavaScript
// (V8's collector workers among them) at nice 10, and the document threads at nice 10 as well (never
// SCHED_IDLE, which all but stops them while their session keeps the cores busy); the event loop
// and libuv's thread pool at the process's priority. Read from Linux's /proc, as the scheduler sees
// them.
import type { ChildProcess } from "node:child_process";
import { readdirSync } from "node:fs";
import { mintToken } from "../../src/auth/mint-token.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { procStatField } from "../helpers/proc-stat.ts";
import { spawnReaped } from "../helpers/process-reaper.ts";
import { START_FLAGS, startServiceProcess, type ServiceProcess } from "../helpers/service-process.ts";
import { TEST_JWT_SECRET, TEST_WEBHOOK_SECRET_KEYS } from "../helpers/test-app.ts";

/** Field `n` of a thread's stat line. */
const statField = (pid: number, tid: number, n: number): number => procStatField(`/proc/${pid}/task/${tid}/stat`, n);
/** A thread's nice value: field 19. */
const niceOf = (pid: number, tid: number): number => statField(pid, tid, 19);
/** A thread's scheduling policy: field 41 (0 SCHED_OTHER, 5 SCHED_IDLE). */
const policyOf = (pid: number, tid: number): number => statField(pid, tid, 41);
const SCHED_OTHER = 0;
const threadsOf = (pid: number): number[] => readdirSync(`/proc/${pid}/task`).map(Number);

/** The nice values of the threads the script lists as there before it began and started later, read while it waits; then it is killed. */
async function threadsNiceness(child: ChildProcess): Promise<{ before: number[]; later: number[] }> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  try {
    const line = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout!.on("data", (chunk) => (out += String(chunk)).endsWith("\n") && resolve(out));
      void exited.then(() => reject(new Error(`the script exited before it answered: ${out}`)));
    });
    const threads = JSON.parse(line) as { before: number[]; later: number[] };
    return {
      before: threads.before.map((tid) => niceOf(child.pid!, tid)),
      later: threads.later.map((tid) => niceOf(child.pid!, tid)),
    };
  } finally {
    child.kill("SIGKILL");
    await exited;
  }
}

it("runs the threads Node starts before any JavaScript at nice 10, and the main thread, the thread pool and workers at 0", async () => {
  // Run with the start script's own flags: the threads there when the script begins are the
  // platform's; a file's stat starts libuv's pool, then a worker thread starts.
  const script = `
    const { readdirSync, stat } = require("node:fs");
    const { Worker } = require("node:worker_threads");
    const before = readdirSync("/proc/self/task").map(Number).filter((tid) => tid !== process.pid);
    stat(process.execPath, () => {
      const worker = new Worker("setInterval(() => {}, 1000)", { eval: true });
      worker.once("online", () => {
        const later = readdirSync("/proc/self/task").map(Number).filter((tid) => tid !== process.pid && !before.includes(tid));
        console.log(JSON.stringify({ before, later })); // then wait, to be read, until killed
      });
    });`;
  const { before, later } = await threadsNiceness(
    spawnReaped(process.execPath, [...START_FLAGS, "-e", script], { stdio: ["ignore", "pipe", "inherit"] }),
  );

  expect(before.length).toBeGreaterThanOrEqual(5); // V8's four workers and its delayed-task thread, at least
  expect(before).toEqual(before.map(() => 10));
  expect(later.length).toBeGreaterThanOrEqual(5); // libuv's four pool threads and the worker
  expect(later).toEqual(later.map(() => 0));
});

describe("the service as npm start runs it", () => {
  let database: TestDatabase;
  let service: ServiceProcess;
  beforeAll(async () => {
    database = await createTestDatabase();
    service = await startServiceProcess({
      env: {
        DATABASE_URL: database.url,
        AUTH_JWT_SECRET: TEST_JWT_SECRET,
        WEBHOOK_SECRET_KEYS: TEST_WEBHOOK_SECRET_KEYS,
        NODE_ENV: "production",
      },
    });
  });
  afterAll(async () => {
    service.child.kill("SIGTERM");
    await service.exited;
    await database.drop();
  });

  it("serves on a main thread at nice 0 and reads a document on a thread at nice 10, not under SCHED_IDLE", async () => {
    const pid = service.child.pid!;
    expect(niceOf(pid, pid)).toBe(0);
    const atStart = new Set(threadsOf(pid));
    expect([...atStart].map((tid) => policyOf(pid, tid))).toEqual([...atStart].map(() => SCHED_OTHER));
    const atTen = [...atStart].filter((tid) => niceOf(pid, tid) === 10);
    expect(atTen.length).toBeGreaterThanOrEqual(5);
    expect([...atStart].filter((tid) => tid !== pid && niceOf(pid, tid) === 0).length).toBeGreaterThanOrEqual(4); // libuv's pool

    const auth = {
      authorization: `Bearer ${await mintToken({ secret: TEST_JWT_SECRET, sub: "priorities", scopes: ["admin"] })}`,
    };
    const app = await fetch(`${service.baseUrl}/applications`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ name: "priorities" }),
    });
    expect(app.status).toBe(201);
    const { id } = (await app.json()) as { id: string };
    const vex = {
      "@context": "https://openvex.dev/ns/v0.2.0",
      "@id": "https://example.test/vex/priorities",
      author: "test",
      timestamp: "2026-11-26T00:00:00Z",
      version: 1,
      statements: [
        {
          vulnerability: { name: "CVE-2026-0001" },
          products: [{ "@id": "pkg:npm/left-pad@1.3.0" }],
          status: "under_investigation",
        },
      ],
    };
    const applied = await fetch(`${service.baseUrl}/applications/${id}/vex`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify(vex),
    });
    expect(applied.status).toBe(200);
    const documentThreads = threadsOf(pid).filter((tid) => !atStart.has(tid));
    expect(documentThreads.length).toBeGreaterThanOrEqual(1);
    expect(documentThreads.map((tid) => niceOf(pid, tid))).toEqual(documentThreads.map(() => 10));
    expect(documentThreads.map((tid) => policyOf(pid, tid))).toEqual(documentThreads.map(() => SCHED_OTHER));
    expect(policyOf(pid, pid)).toBe(SCHED_OTHER);
  });
});
