// Stopping under a supervisor (docs/spec/CONTRACT.md §9): SIGTERM sent to `npm start` reaches node, which shuts
// down in the order load balancers expect and exits 0 leaving no process behind; a request still
// running after the grace period is cut with nothing of it written; Ctrl-C counts once although
// it reaches node twice, and a second signal exits at once.
import { readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import { createClient } from "graphql-ws";
import pg from "pg";
import WebSocket from "ws";
import { mintToken } from "../../src/auth/mint-token.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { eventually } from "../helpers/scan-engines.ts";
import { startServiceProcess, startWithNpm, type ServiceProcess } from "../helpers/service-process.ts";
import { startTestApp, TEST_JWT_SECRET, TEST_WEBHOOK_SECRET_KEYS } from "../helpers/test-app.ts";

let database: TestDatabase;
let db: pg.Client;
let auth: { authorization: string };
beforeAll(async () => {
  database = await createTestDatabase();
  db = new pg.Client({ connectionString: database.url });
  await db.connect();
  auth = {
    authorization: `Bearer ${await mintToken({ secret: TEST_JWT_SECRET, sub: "shutdown-test", scopes: ["admin"] })}`,
  };
});
afterAll(async () => {
  await db.end();
  await database.drop();
});

/** What a test leaves to undo, failed or not: undone after it, last first. */
const cleanups: Array<() => unknown> = [];
const onCleanup = (undo: () => unknown) => cleanups.push(undo);
afterEach(async () => {
  for (const undo of cleanups.splice(0).reverse()) await undo();
});

const serviceEnv = (env: Record<string, string>) => ({
  DATABASE_URL: database.url,
  AUTH_JWT_SECRET: TEST_JWT_SECRET,
  WEBHOOK_SECRET_KEYS: TEST_WEBHOOK_SECRET_KEYS,
  NODE_ENV: "production",
  LOG_LEVEL: "info",
  ...env,
});

// --- the process tree, from Linux's /proc ---

/** The processes `pid` started. */
const childrenOf = (pid: number): number[] =>
  readdirSync(`/proc/${pid}/task`).flatMap((task) =>
    readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").split(" ").filter(Boolean).map(Number),
  );

const commandLineOf = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();

/** The processes (zombies included) of process group `pgid`. */
function processGroup(pgid: number): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]) === pgid; // state, ppid, pgrp
      } catch {
        return false; // ended meanwhile
      }
    })
    .map(Number);
}

/** Ends whatever is left of `service`'s process group (a failed test leaves nothing running). */
function killGroup(service: ServiceProcess): void {
  for (const pid of processGroup(service.child.pid!)) process.kill(pid, "SIGKILL");
}

/** The node process `npm start` runs: its own child, with no shell left between them. */
function nodeOf(npm: ServiceProcess): number {
  const children = childrenOf(npm.child.pid!);
  expect(children).toHaveLength(1);
  expect(commandLineOf(children[0]!)).toMatch(
    /^\S*node --max-old-space-size=\d+ --require \.\/dist\/platform-threads-priority\.cjs dist\/main\.js$/,
  );
  return children[0]!;
}

// --- clients ---

/** A request on a new connection (no pooled keep-alive socket the server may just have closed). */
function freshRequest(
  method: string,
  url: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; connection?: string; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .request(url, { method, agent: false, headers }, (res) => {
        let body = "";
        res.on("data", (chunk) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode!, connection: res.headers.connection, body }));
      })
      .on("error", reject)
      .end(body);
  });
}

const freshGet = (url: string, headers: Record<string, string> = {}) => freshRequest("GET", url, headers);

/** A SARIF log of `results` distinct findings. */
function sarifReport(results: number): Buffer {
  const rule = {
    id: "shutdown/tainted-sql",
    properties: { tags: ["security", "external/cwe/cwe-89"], "security-severity": "8.1" },
  };
  return Buffer.from(
    JSON.stringify({
      version: "2.1.0",
      runs: [
        {
          tool: { driver: { name: "ShutdownScanner", version: "1.0.0", rules: [rule] } },
          results: Array.from({ length: results }, (_, i) => ({
            ruleId: rule.id,
            message: { text: `Query built from request input in handler ${i}` },
            locations: [
              {
                physicalLocation: { artifactLocation: { uri: `src/handlers/h${i}.ts` }, region: { startLine: 10 + i } },
              },
            ],
          })),
        },
      ],
    }),
  );
}

type UploadAnswer =
  { status: number; body: { id: string; status: string; summary: { totalFindings: number } } } | { error: string };

/**
 * An upload as a slow client sends it, on a connection of its own: `started` resolves once the
 * service has the request (its `100 Continue`), the first of `pieces` goes then, the others only
 * once `go` resolves, one every `everyMs` (the client's pace). `answer`: the service's, or the
 * error that cut the connection.
 */
function slowUpload(
  baseUrl: string,
  applicationId: string,
  report: Buffer,
  options: { pieces: number; go: Promise<unknown>; everyMs: number },
) {
  const request = http.request(`${baseUrl}/applications/${applicationId}/scan-reports`, {
    method: "POST",
    agent: false,
    headers: {
      ...auth,
      "content-type": "application/sarif+json",
      "content-length": report.length,
      expect: "100-continue",
    },
  });
  const started = new Promise<void>((resolve) => request.once("continue", resolve));
  void started.then(async () => {
    const size = Math.ceil(report.length / options.pieces);
    request.write(report.subarray(0, size));
    await options.go;
    for (let offset = size; offset < report.length; offset += size) {
      await new Promise((resolve) => setTimeout(resolve, options.everyMs));
      request.write(report.subarray(offset, offset + size));
    }
    request.end();
  });
  const answer = new Promise<UploadAnswer>((resolve) => {
    request.once("response", (res) => {
      let text = "";
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    request.once("error", (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
  });
  return { started, answer };
}

async function createApplication(baseUrl: string, name: string): Promise<string> {
  const res = await fetch(`${baseUrl}/applications`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ name }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

const logged = (service: ServiceProcess, message: RegExp) => service.logs().filter((line) => message.test(line.msg));
const untilLogged = (service: ServiceProcess, message: RegExp) =>
  eventually(async () => logged(service, message)[0], 20_000);

const SHUTDOWN_STEPS = [
  /^shutting down/,
  /^background workers stopped/,
  /^stopped accepting connections/,
  /^live connections closed/,
  /^in-flight requests finished/,
  /^shutdown complete/,
];

it("SIGTERM to npm start: /readyz 503 at once, served through the drain, uploads finish, live clients told to go, leases free at once, exit 0, no process left", async () => {
  const service = await startWithNpm({
    env: serviceEnv({
      SHUTDOWN_DRAIN_MS: "2000",
      SHUTDOWN_GRACE_MS: "20000",
      SCAN_DURATION_MS: "600000",
      SCAN_LEASE_MS: "600000",
    }),
  });
  onCleanup(() => killGroup(service));
  const node = nodeOf(service);
  const applicationId = await createApplication(service.baseUrl, "drained");

  // A scan this instance holds, with a lease far from expiring.
  const triggered = await fetch(`${service.baseUrl}/applications/${applicationId}/scans`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ scanType: "sast" }),
  });
  const scanId = ((await triggered.json()) as { id: string }).id;
  const scanRow = async () =>
    (await db.query("SELECT status, lease_owner FROM scans WHERE id = $1", [scanId])).rows[0] as {
      status: string;
      lease_owner: string | null;
    };
  await eventually(async () => (await scanRow()).lease_owner !== null);

  // Live clients: a graphql-ws subscription and an SSE one.
  let wsClose: number | undefined;
  const ws = createClient({
    url: `${service.baseUrl.replace(/^http/, "ws")}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: auth,
    retryAttempts: 0,
    lazy: false,
    on: { closed: (event) => (wsClose = (event as { code: number }).code) },
    onNonLazyError: () => {},
  });
  onCleanup(() => ws.dispose());
  const wsConnected = new Promise((resolve) => ws.on("connected", resolve));
  ws.subscribe(
    { query: `subscription { scanUpdated(applicationId: "${applicationId}") { id status } }` },
    { next: () => {}, error: () => {}, complete: () => {} },
  );
  await wsConnected;
  const sse = await fetch(`${service.baseUrl}/graphql`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ query: `subscription { scanUpdated(applicationId: "${applicationId}") { id status } }` }),
  });
  expect(sse.status).toBe(200);
  const sseReader = sse.body!.getReader();
  let sseText = "";
  const sseEnded = (async () => {
    for (;;) {
      const { value, done } = await sseReader.read();
      if (done) return "ended";
      sseText += new TextDecoder().decode(value);
    }
  })().catch((err: Error) => err);

  // A report upload in flight: its first piece now, the rest only after the listener closed.
  const report = sarifReport(300);
  let listenerClosed!: () => void;
  const upload = slowUpload(service.baseUrl, applicationId, report, {
    pieces: 20,
    go: new Promise((resolve) => (listenerClosed = () => resolve(undefined))),
    everyMs: 50,
  });
  await upload.started;

  const other = await startTestApp({ SCAN_DURATION_MS: "0" }, { database }); // another instance on the same database
  onCleanup(() => other.close());
  const signalled = Date.now();
  process.kill(service.child.pid!, "SIGTERM");
  expect(await untilLogged(service, /^shutting down/)).toMatchObject({
    signal: "SIGTERM",
    drainMs: 2000,
    graceMs: 20000,
  });

  // Draining: not ready, but still serving, and every answer closes its connection.
  expect(await freshGet(`${service.baseUrl}/readyz`)).toMatchObject({
    status: 503,
    connection: "close",
    body: JSON.stringify({ status: "shutting down" }),
  });
  const served = await freshGet(`${service.baseUrl}/applications`, auth);
  expect(served).toMatchObject({ status: 200, connection: "close" });
  expect(JSON.parse(served.body).map((a: { id: string }) => a.id)).toEqual([applicationId]);

  // The scan's lease is handed back while the instance still runs (the upload it waits for is
  // held back): another instance takes the scan over at once, not when the lease would expire.
  await untilLogged(service, /^background workers stopped/);
  expect(await scanRow()).toEqual({ status: "running", lease_owner: null });
  expect(await other.app.scanRunner.runOnce()).toBe(1);
  expect((await scanRow()).status).toBe("completed");
  expect(logged(service, /^shutdown complete/)).toHaveLength(0);

  // The drain is over: no new connection; the upload and the SSE stream were in flight then.
  expect((await untilLogged(service, /^stopped accepting connections/)).inFlight).toBe(2);
  expect(Date.now() - signalled).toBeGreaterThanOrEqual(2000);
  await expect(freshGet(`${service.baseUrl}/healthz`)).rejects.toMatchObject({ code: "ECONNREFUSED" });
  listenerClosed();

  const answer = await upload.answer;
  expect(answer).toMatchObject({ status: 202, body: { status: "completed", summary: { totalFindings: 300 } } });
  await eventually(async () => wsClose !== undefined);
  expect(wsClose).toBe(1001);
  expect(await sseEnded).toBe("ended");
  expect(sseText).not.toContain("event: complete"); // ended, not completed: clients reconnect

  expect(await service.exited).toBe(0);
  expect(Date.now() - signalled).toBeLessThan(20_000);
  const { rows } = await db.query("SELECT status FROM scans WHERE id = $1", [
    (answer as { body: { id: string } }).body.id,
  ]);
  expect(rows).toEqual([{ status: "completed" }]);
  for (const step of SHUTDOWN_STEPS) expect(logged(service, step)).toHaveLength(1);
  const order = service
    .logs()
    .map((line) => SHUTDOWN_STEPS.findIndex((step) => step.test(line.msg)))
    .filter((i) => i >= 0);
  expect(order.filter((i) => i !== 1)).toEqual([0, 2, 3, 4, 5]); // the workers stop beside the drain
  expect(() => process.kill(node, 0)).toThrow(expect.objectContaining({ code: "ESRCH" }));
  expect(processGroup(service.child.pid!)).toEqual([]);
}, 60_000);

it("cuts the requests still running when the grace period is over, and nothing of them is written", async () => {
  const service = await startServiceProcess({ env: serviceEnv({ SHUTDOWN_GRACE_MS: "1000" }) });
  onCleanup(() => service.child.kill("SIGKILL"));
  const uploadedTo = await createApplication(service.baseUrl, "upload-cut");
  const deleted = await createApplication(service.baseUrl, "delete-cut");
  const policy = await fetch(`${service.baseUrl}/policies`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ name: "targets-delete-cut", action: "block", conditions: { applicationIds: [deleted] } }),
  });
  const policyId = ((await policy.json()) as { id: string }).id;

  // Two requests whose transactions write, then wait for locks held here: an upload (its scan and
  // scan.started written, it waits for the lock completing a scan of its application takes) and an
  // application's deletion (the application deleted, it waits to take its id out of the policy).
  // And a VEX, applied by a report thread on a connection of its own, waiting for the same
  // application's lock before it writes its statement.
  const holder = new pg.Client({ connectionString: database.url });
  await holder.connect();
  onCleanup(() => holder.end());
  const holderPid = (await holder.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number;
  await holder.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", [uploadedTo]);
  await holder.query("BEGIN");
  await holder.query("SELECT 1 FROM policies WHERE id = $1 FOR UPDATE", [policyId]);
  const upload = slowUpload(service.baseUrl, uploadedTo, sarifReport(5), {
    pieces: 1,
    go: Promise.resolve(),
    everyMs: 0,
  });
  const deletion = freshRequest("DELETE", `${service.baseUrl}/applications/${deleted}`, auth);
  const waitingAfterWriting = `
    SELECT c.relname FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid JOIN pg_class c ON c.oid = l.relation
     WHERE a.datname = current_database() AND a.wait_event_type = 'Lock' AND l.mode = 'RowExclusiveLock' AND c.relname IN ('scans', 'applications')
     ORDER BY c.relname`;
  await eventually(async () => (await db.query(waitingAfterWriting)).rows.length === 2);
  expect((await db.query(waitingAfterWriting)).rows).toEqual([{ relname: "applications" }, { relname: "scans" }]);
  const vexWaiters =
    "SELECT count(*)::int AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE d.datname = current_database() AND l.locktype = 'advisory' AND NOT l.granted";
  const advisoryBefore = (await db.query(vexWaiters)).rows[0].n as number;
  const openVex = {
    "@context": "https://openvex.dev/ns/v0.2.0",
    "@id": "urn:uuid:0b0b0b0b-0000-4000-8000-000000000001",
    author: "shutdown-test",
    timestamp: new Date().toISOString(),
    version: 1,
    statements: [
      { vulnerability: { name: "CVE-2021-44228" }, status: "not_affected", justification: "component_not_present" },
    ],
  };
  const vex = freshRequest(
    "POST",
    `${service.baseUrl}/applications/${uploadedTo}/vex`,
    { ...auth, "content-type": "application/json" },
    JSON.stringify(openVex),
  );
  await eventually(async () => (await db.query(vexWaiters)).rows[0].n === advisoryBefore + 1);

  const signalled = Date.now();
  service.child.kill("SIGTERM");
  expect(await upload.answer).toEqual({ error: "ECONNRESET" }); // cut: no answer
  await expect(deletion).rejects.toMatchObject({ code: "ECONNRESET" });
  await expect(vex).rejects.toMatchObject({ code: "ECONNRESET" });
  expect(await untilLogged(service, /^grace period over/)).toMatchObject({ requests: 3, graceMs: 1000 });
  expect(Date.now() - signalled).toBeGreaterThanOrEqual(1000);
  // The locks are free at once: had the cut requests kept their database connections, their
  // transactions would now commit with nobody to answer. They find them gone and roll back.
  await holder.query("ROLLBACK");
  await holder.query("SELECT pg_advisory_unlock_all()");
  expect(await service.exited).toBe(0);
  const others =
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid NOT IN (pg_backend_pid(), $1)";
  await eventually(async () => (await db.query(others, [holderPid])).rows[0].n === 0);

  const count = async (sql: string, id: string) => (await db.query(sql, [id])).rows[0].n as number;
  expect(await count("SELECT count(*)::int AS n FROM scans WHERE application_id = $1", uploadedTo)).toBe(0);
  // Its application's creation is on record (application.created); nothing of the upload is.
  expect(
    await count(
      "SELECT count(*)::int AS n FROM events WHERE application_id = $1 AND type NOT LIKE 'application.%'",
      uploadedTo,
    ),
  ).toBe(0);
  expect(await count("SELECT count(*)::int AS n FROM vex_statements WHERE application_id = $1", uploadedTo)).toBe(0);
  expect(await count("SELECT count(*)::int AS n FROM applications WHERE id = $1", deleted)).toBe(1);
  expect(await count("SELECT count(*)::int AS n FROM policies WHERE $1 = ANY(application_ids)", deleted)).toBe(1);
}, 60_000);

it("counts Ctrl-C once though it reaches node twice (from the terminal and through npm); a second signal exits at once", async () => {
  const service = await startWithNpm({ env: serviceEnv({ SHUTDOWN_DRAIN_MS: "1000" }) });
  onCleanup(() => killGroup(service));
  const node = nodeOf(service);
  const applicationId = await createApplication(service.baseUrl, "interrupted");
  // An upload whose end never comes keeps the shutdown waiting in its grace period.
  const upload = slowUpload(service.baseUrl, applicationId, sarifReport(10), {
    pieces: 2,
    go: new Promise(() => {}),
    everyMs: 0,
  });
  await upload.started;

  process.kill(-service.child.pid!, "SIGINT"); // what a terminal does on Ctrl-C: SIGINT to the whole foreground group
  expect(await untilLogged(service, /^shutting down/)).toMatchObject({ signal: "SIGINT" });
  expect((await untilLogged(service, /^stopped accepting connections/)).inFlight).toBe(1);
  expect(logged(service, /^second signal/)).toEqual([]); // npm's copy came a second ago, with the terminal's

  process.kill(service.child.pid!, "SIGTERM"); // npm forwards it
  expect(await untilLogged(service, /^second signal/)).toMatchObject({ signal: "SIGTERM", exitCode: 143 });
  expect(await upload.answer).toEqual({ error: "ECONNRESET" });
  expect(await service.exited).not.toBe(0);
  expect(logged(service, /^shutdown complete/)).toEqual([]);
  expect(() => process.kill(node, 0)).toThrow(expect.objectContaining({ code: "ESRCH" }));
  expect(processGroup(service.child.pid!)).toEqual([]);
}, 60_000);
