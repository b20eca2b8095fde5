// Applying a VEX of 10,000 statements to an application with 10,000 vulnerabilities (CONTRACT
// §13), on the real service (`dist/main.js`, its own process) and a fresh database. Prints how
// long each apply takes (every statement changing a vulnerability, back and forth, and the same
// document again, every one unchanged), how many SQL statements the first apply sends (counted inside
// the service by a preloaded counter, bench/count-statements.mjs, beside the fan-out of its events
// after it and what the background workers send over as long while idle), and the latency other
// callers see meanwhile: 8 connections reading a page of vulnerabilities of another application at
// a steady rate (BENCH_VEX_RATE, 200/s), their p50/p99 while idle and while the VEX is applied and
// its events fanned out (BENCH_VEX_ROUNDS rounds), in the same run, beside the same writes as bare
// SQL. The idle windows are taken between the rounds, so that the baseline is the same minutes of
// this shared machine as the applies, each beside a control window as long, as idle, whose ratio
// to idle shows how far this machine alone moves a p99 ratio. The documents are sent from a worker
// thread (vex-sender.ts).
// BENCH_CPU_PROF_DIR=dir writes the service's CPU profile there.
import { randomBytes } from "node:crypto";
import { spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { Worker } from "node:worker_threads";
import pg from "pg";
import { Pool } from "undici";
import { mintToken } from "../src/auth/mint-token.ts";
import { benchDatabase } from "./database.ts";
import { serviceFlags } from "./service-flags.ts";
import { untilReady } from "./until-ready.ts";

const SIZE = Number(process.env.BENCH_VEX_STATEMENTS ?? 10_000);
const SECRET = "bench-secret-bench-secret-bench-secret-00";
const PORT = Number(process.env.BENCH_PORT ?? 18183);
const READERS = 8;
/** Requests a second the other callers send (BENCH_VEX_RATE). */
const RATE = Number(process.env.BENCH_VEX_RATE ?? 200);
/**
 * Idle readers timed before each round (BENCH_VEX_ROUNDS rounds of applies), twice: the idle window
 * and the control, whose p99 against idle's is what this machine alone makes of a ratio (nothing is
 * applied in either), printed beside the applies'.
 */
const IDLE_MS = 3_000;
/**
 * The readers' first seconds, not timed. Timed, they had been the whole idle baseline: in one run its
 * p99 came down from 7.7 to 2.7 ms over those 30 s, a baseline higher than the machine's
 * (bench/notes/2026-11-27-document-threads-sched-idle.md).
 */
const WARM_UP_MS = 3_000;
/** After a round's events are fanned out, before idle is timed again. */
const SETTLE_MS = 1_000;
/**
 * 20 by default: the p99s then rest on about 12,000 requests idle and as many during the applies
 * at 200/s. Over 3 or 5 rounds they rest on their 20 or 30 slowest, and the ratio of two such p99s
 * spreads past 2× in a run that is 1.7× over all twenty (bench/notes/2026-11-29-vex-apply.md); the
 * ratio of each block of BLOCK_ROUNDS rounds is printed beside the whole run's to show it.
 */
const ROUNDS = Number(process.env.BENCH_VEX_ROUNDS ?? 20);
const BLOCK_ROUNDS = 5;

/** A GHSA id of its own for each number (GitHub's alphabet). */
function ghsaOf(i: number): string {
  const alphabet = "23456789cfghjmpqrvwx";
  const digits = Array.from(
    { length: 12 },
    (_, k) => alphabet[Math.floor(i / alphabet.length ** k) % alphabet.length],
  ).join("");
  return `GHSA-${digits.slice(0, 4)}-${digits.slice(4, 8)}-${digits.slice(8)}`;
}

/** A CycloneDX 1.6 report of `size` vulnerabilities, each its own CVE in its own package. */
function report(size: number): string {
  const components = Array.from({ length: size }, (_, i) => ({
    type: "library",
    "bom-ref": `c${i}`,
    name: `package-${i}`,
    version: "1.0.0",
    purl: `pkg:npm/package-${i}@1.0.0`,
  }));
  const vulnerabilities = components.map((c, i) => ({
    id: `CVE-2030-${100_000 + i}`,
    references: [{ id: ghsaOf(i), source: { name: "GitHub" } }],
    ratings: [{ severity: ["critical", "high", "medium", "low"][i % 4] }],
    description: `Vulnerability ${i}`,
    affects: [{ ref: c["bom-ref"] }],
  }));
  return JSON.stringify({
    bomFormat: "CycloneDX",
    specVersion: "1.6",
    version: 1,
    metadata: { tools: { components: [{ type: "application", name: "bench-scanner" }] } },
    components,
    vulnerabilities,
  });
}

/** What one apply writes, as one statement: each row flipped, with its history row and its event. */
const BARE_APPLY = `
  WITH flipped AS (
    UPDATE vulnerabilities v
       SET status = CASE WHEN v.status = 'accepted' THEN 'in_progress' ELSE 'accepted' END::"VulnerabilityStatus",
           analysis = jsonb_build_object('state', 'in_triage', 'source', 'vex', 'by', 'bench', 'at', now()), updated_at = now()
     WHERE v.application_id = $1::uuid
    RETURNING v.id, v.application_id, v.status, v.analysis, v.severity, v.title, v.created_at
  ), history AS (
    INSERT INTO vulnerability_changes (vulnerability_id, at, from_status, to_status, source, by)
    SELECT id, now(), 'accepted', status, 'vex', 'bench' FROM flipped
  )
  INSERT INTO events (id, type, application_id, data, occurred_at)
  SELECT gen_random_uuid(), 'vulnerability.updated', application_id,
         json_build_object('id', id, 'severity', severity, 'applicationId', application_id, 'title', title, 'createdAt', created_at,
                           'status', status, 'analysis', analysis), now()
    FROM flipped`;

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};

/**
 * Readers asking for a page of vulnerabilities at a steady rate (RATE a second in all, READERS
 * connections) until stopped; each answer's start and duration. A steady rate, not requests
 * without pause: a closed loop of 8 clients keeps both CPUs busy on its own, and then measures
 * what share of them the apply takes, not the latency another caller sees.
 */
function readers(base: string, path: string, headers: Record<string, string>) {
  const pool = new Pool(base, { connections: READERS });
  const samples: { at: number; ms: number }[] = [];
  const periodMs = (1000 * READERS) / RATE;
  let running = true;
  const loops = Array.from({ length: READERS }, async (_, i) => {
    let next = performance.now() + (i * periodMs) / READERS;
    while (running) {
      const wait = next - performance.now();
      if (wait > 0) await sleep(wait);
      // A request due while the previous one was still out is sent at once, and timed from when it was due.
      const at = Math.min(next, performance.now());
      next += periodMs;
      const res = await pool.request({ method: "GET", path, headers });
      await res.body.arrayBuffer();
      if (res.statusCode !== 200) throw new Error(`reader got ${res.statusCode}`);
      samples.push({ at, ms: performance.now() - at });
    }
  });
  // A reader's failure is thrown by stop(), so that the service is still stopped (runVexBench's finally).
  const ended = Promise.all(loops);
  ended.catch(() => {});
  return {
    between: (from: number, to: number) => samples.filter((s) => s.at >= from && s.at < to).map((s) => s.ms),
    async stop() {
      running = false;
      try {
        await ended;
      } finally {
        await pool.close();
      }
    },
  };
}

export async function runVexBench(): Promise<void> {
  const db = await benchDatabase();
  const profile = process.env.BENCH_CPU_PROF_DIR
    ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`]
    : [];
  const server = spawn(
    process.execPath,
    [
      ...profile,
      "--import",
      new URL("./count-statements.mjs", import.meta.url).pathname,
      ...serviceFlags(),
      "dist/main.js",
    ],
    {
      env: {
        ...process.env,
        DATABASE_URL: db.url,
        PORT: String(PORT),
        HOST: "127.0.0.1",
        NODE_ENV: "production",
        AUTH_JWT_SECRET: SECRET,
        WEBHOOK_SECRET_KEYS: randomBytes(32).toString("base64"),
        LOG_LEVEL: "silent",
        RATE_LIMIT_PER_MINUTE: "100000000",
      },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  server.stderr!.on("data", (chunk) => (stderr += String(chunk)));
  const statementsSoFar = async () => {
    const seen = stderr.length;
    server.kill("SIGUSR2");
    for (let i = 0; i < 100 && !/statements=\d+\n/.test(stderr.slice(seen)); i++) await sleep(10);
    return Number(/statements=(\d+)\n/.exec(stderr.slice(seen))?.[1]);
  };
  const base = `http://127.0.0.1:${PORT}`;
  try {
    await untilReady(base);
    const headers = { authorization: `Bearer ${await mintToken({ secret: SECRET, sub: "bench", scopes: ["admin"] })}` };
    const create = async (name: string) =>
      (
        (await (
          await fetch(`${base}/applications`, {
            method: "POST",
            headers: { ...headers, "content-type": "application/json" },
            body: JSON.stringify({ name }),
          })
        ).json()) as { id: string }
      ).id;
    const app = await create("bench-vex");
    const other = await create("bench-vex-other");
    for (const [target, size] of [
      [app, SIZE],
      [other, 200],
    ] as const) {
      const res = await fetch(`${base}/applications/${target}/scan-reports`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: report(size),
      });
      if (res.status !== 202) throw new Error(`report answered ${res.status}`);
    }
    // The documents are built and sent by a worker thread (vex-sender.ts), not by this event loop, which times the other callers.
    const sender = new Worker(new URL("./ts-worker.mjs", import.meta.url), {
      argv: [new URL("./vex-sender.ts", import.meta.url).href],
      workerData: { url: `${base}/applications/${app}/vex`, authorization: headers.authorization, size: SIZE },
    });
    const failed = new Promise<never>((_, reject) => sender.once("error", reject));
    const bytes = (await Promise.race([new Promise((resolve) => sender.once("message", resolve)), failed])) as number;
    type Applied = {
      start: number;
      end: number;
      status: number;
      body: { applied: number; unchanged: number; pending: number; detail?: string };
    };
    const apply = async (document: "not_affected" | "under_investigation") => {
      const reply = new Promise<Applied>((resolve) => sender.once("message", resolve));
      sender.postMessage(document);
      const { start, end, status, body } = await Promise.race([reply, failed]);
      if (status !== 200) throw new Error(`VEX answered ${status}: ${body.detail}`);
      // The sender's epoch times, on this thread's performance.now() clock.
      return { start: start - performance.timeOrigin, end: end - performance.timeOrigin, body };
    };
    console.log(
      `OpenVEX: ${SIZE.toLocaleString("en")} statements, ${(bytes / 2 ** 20).toFixed(1)} MiB, against ${SIZE.toLocaleString("en")} vulnerabilities`,
    );

    // Statements of one apply, with no request but it, once the reports' events are fanned out. Then
    // those of the fan-out of its events (the dispatcher's claims after each batch included), and
    // what the background workers (scan runner, delivery dispatcher) send over as long, idle.
    const watcher = new pg.Client({ connectionString: db.url });
    await watcher.connect();
    const untilFannedOut = async () => {
      while ((await watcher.query("SELECT 1 FROM events WHERE fanned_out_at IS NULL LIMIT 1")).rowCount)
        await sleep(20);
    };
    await untilFannedOut();
    const before = await statementsSoFar();
    const counted = await apply("not_affected");
    const sent = (await statementsSoFar()) - before;
    await untilFannedOut();
    const fanOutStatements = (await statementsSoFar()) - before - sent;
    const idleFrom = await statementsSoFar();
    await sleep(counted.end - counted.start);
    const idleStatements = (await statementsSoFar()) - idleFrom;
    console.log(
      `apply (every statement changes its vulnerability): ${((counted.end - counted.start) / 1000).toFixed(2)} s, ` +
        `${sent} SQL statements counted meanwhile (its events' fan-out after it ${fanOutStatements}; ${idleStatements} over as long idle), ${JSON.stringify(counted.body)}`,
    );

    // Other callers, ROUNDS times idle and then while applying a document that changes every status
    // (back and forth), then the same again (every status unchanged), and until the first one's
    // events are fanned out. Several rounds, so that the p99 of each window rests on several hundred
    // requests, not on its two or three slowest.
    const load = readers(base, `/applications/${other}/vulnerabilities?limit=20`, headers);
    await sleep(WARM_UP_MS);
    const idleWindows: [number, number][] = [];
    const controlWindows: [number, number][] = [];
    const rounds: { changing: Awaited<ReturnType<typeof apply>>; unchanged: Awaited<ReturnType<typeof apply>> }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Idle first in even rounds, the control first in odd ones, so that neither is always nearer the last fan-out.
      for (const windows of round % 2 === 0 ? [idleWindows, controlWindows] : [controlWindows, idleWindows]) {
        const from = performance.now();
        await sleep(IDLE_MS);
        windows.push([from, performance.now()]);
      }
      const document = round % 2 === 0 ? "under_investigation" : "not_affected";
      rounds.push({ changing: await apply(document), unchanged: await apply(document) });
      await untilFannedOut();
      await sleep(SETTLE_MS);
    }
    // The floor: the same writes as one apply (every row's status and analysis, a history row and
    // an event each), sent as plain SQL by this process in one transaction, the service doing nothing;
    // as many times as the applies above changed every status.
    const bare = new pg.Client({ connectionString: db.url });
    await bare.connect();
    const bareWindows: [number, number][] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const start = performance.now();
      await bare.query("BEGIN");
      await bare.query(BARE_APPLY, [app]);
      await bare.query("COMMIT");
      bareWindows.push([start, performance.now()]);
    }
    await bare.end();
    await load.stop();
    await sender.terminate();
    // When the last of each round's events was fanned out (Postgres's clock, this machine's, as epoch
    // ms), on this thread's performance.now() clock: the first apply's events are the round's only ones.
    const fannedOut: number[] = [];
    for (const { changing, unchanged } of rounds) {
      const { rows } = await watcher.query<{ last: number }>(
        "SELECT extract(epoch FROM max(fanned_out_at)) * 1000 AS last FROM events WHERE occurred_at >= to_timestamp($1 / 1000.0) AND occurred_at < to_timestamp($2 / 1000.0)",
        [performance.timeOrigin + changing.start, performance.timeOrigin + unchanged.start],
      );
      fannedOut.push(Number(rows[0]!.last) - performance.timeOrigin);
    }
    await watcher.end();
    const ends = rounds.map(({ unchanged }, i) => Math.max(unchanged.end, fannedOut[i]!));
    // The readers' requests in the idle windows and during the applies of rounds [from, to).
    const within = (windows: [number, number][]) => windows.flatMap(([start, end]) => load.between(start, end));
    const idleIn = (from: number, to: number) => within(idleWindows.slice(from, to));
    const controlIn = (from: number, to: number) => within(controlWindows.slice(from, to));
    const duringIn = (from: number, to: number) =>
      rounds.slice(from, to).flatMap(({ changing }, k) => load.between(changing.start, ends[from + k]!));
    const p99Ratio = (of: number[], to: number[]) => `${(percentile(of, 99) / percentile(to, 99)).toFixed(2)}×`;
    const idle = idleIn(0, ROUNDS);
    const during = duringIn(0, ROUNDS);
    const control = controlIn(0, ROUNDS);
    const duringBare = within(bareWindows);
    const seconds = (applies: { start: number; end: number }[]) =>
      applies.map((a) => ((a.end - a.start) / 1000).toFixed(2)).join(", ");
    console.log(
      `${ROUNDS} rounds: apply changing every status (back and forth) ${seconds(rounds.map((r) => r.changing))} s, ${JSON.stringify(rounds[0]!.changing.body)}`,
    );
    console.log(
      `the same document again (every statement unchanged) ${seconds(rounds.map((r) => r.unchanged))} s, ${JSON.stringify(rounds[0]!.unchanged.body)}`,
    );
    console.log(
      `the first apply's events fanned out, after the second apply ended: ${rounds.map(({ unchanged }, i) => Math.round(fannedOut[i]! - unchanged.end)).join(", ")} ms`,
    );
    const p = (values: number[], q: number) => percentile(values, q).toFixed(1);
    console.log(
      `GET /applications/{other}/vulnerabilities?limit=20 at ${RATE}/s over ${READERS} connections: idle p50 ${p(idle, 50)} ms, p99 ${p(idle, 99)} ms (${idle.length} requests); during the applies and their fan-out p50 ${p(during, 50)} ms, p99 ${p(during, 99)} ms (${during.length} requests); p99 ratio ${p99Ratio(during, idle)}`,
    );
    console.log(
      `the control, idle as long beside each idle window: p50 ${p(control, 50)} ms, p99 ${p(control, 99)} ms (${control.length} requests); p99 ratio to idle ${p99Ratio(control, idle)}; ` +
        `the applies' p99 ratio to idle and control together ${p99Ratio(during, [...idle, ...control])}`,
    );
    if (ROUNDS >= 2 * BLOCK_ROUNDS) {
      const blocks = (of: (from: number, to: number) => number[]) => {
        const ratios: string[] = [];
        for (let from = 0; from + BLOCK_ROUNDS <= ROUNDS; from += BLOCK_ROUNDS)
          ratios.push(p99Ratio(of(from, from + BLOCK_ROUNDS), idleIn(from, from + BLOCK_ROUNDS)));
        return ratios.join(", ");
      };
      console.log(
        `the same p99 ratios over each ${BLOCK_ROUNDS} rounds: the applies' ${blocks(duringIn)}; the control's ${blocks(controlIn)}`,
      );
    }
    console.log(
      `the same writes as bare SQL (the floor), ${ROUNDS} times: ${seconds(bareWindows.map(([start, end]) => ({ start, end })))} s; readers meanwhile p50 ${p(duringBare, 50)} ms, p99 ${p(duringBare, 99)} ms (${duringBare.length} requests); p99 ratio ${p99Ratio(duringBare, idle)}`,
    );
  } finally {
    server.kill("SIGTERM");
    await new Promise((r) => server.once("exit", r));
    await db.stop();
  }
}
