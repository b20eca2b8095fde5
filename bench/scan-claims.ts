// Agents claiming scans (docs/spec/CONTRACT.md §12, issue 21): 4 agents, each its own token and keep-alive
// connection, claim from 1,000 queued external scans (POST /scan-jobs/claim, no waiting) until the
// queue answers 204, against the real service (`dist/main.js`, its own process) on a fresh
// database. Checks that every scan was claimed exactly once; prints claim latency p50/p99/max.
// The floor, in the same run: the scans queued again, and 4 pg clients running just the claiming
// UPDATE … FOR UPDATE SKIP LOCKED in a transaction each, as the service's claim does at its core.
// BENCH_CPU_PROF_DIR=dir writes the service's CPU profile there.
import pg from "pg";
import { Agent, request } from "undici";
import { mintToken } from "../src/auth/mint-token.ts";
import { startServiceProcess } from "../test/helpers/service-process.ts";
import { cpuSeconds } from "./cpu-time.ts";
import { benchDatabase } from "./database.ts";
import { extraServiceFlags } from "./service-flags.ts";

const AGENTS = 4;
const SCANS = Number(process.env.BENCH_CLAIM_SCANS ?? 1000);
const SECRET = "bench-secret-bench-secret-bench-secret-00";

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const ms = (n: number) => n.toFixed(1);

function summary(latencies: number[], wallMs: number): string {
  const sorted = [...latencies].sort((a, b) => a - b);
  return `${sorted.length} claims in ${(wallMs / 1000).toFixed(2)} s (${Math.round(sorted.length / (wallMs / 1000))}/s): p50 ${ms(percentile(sorted, 50))} ms, p99 ${ms(percentile(sorted, 99))} ms, max ${ms(sorted.at(-1)!)} ms`;
}

/** Claims until the queue is empty; the ids it got and how long each claim took. */
async function agentLoop(base: string, token: string, name: string): Promise<{ ids: string[]; latencies: number[] }> {
  const dispatcher = new Agent({ connections: 1 });
  const ids: string[] = [];
  const latencies: number[] = [];
  const body = JSON.stringify({ scanTypes: ["sast", "sca"], agent: name, leaseSeconds: 300 });
  try {
    for (;;) {
      const start = performance.now();
      const res = await request(`${base}/scan-jobs/claim`, {
        method: "POST",
        dispatcher,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body,
      });
      const text = await res.body.text();
      latencies.push(performance.now() - start);
      if (res.statusCode === 204) return { ids, latencies };
      if (res.statusCode !== 200) throw new Error(`claim answered ${res.statusCode}: ${text}`);
      ids.push((JSON.parse(text) as { scan: { id: string } }).scan.id);
    }
  } finally {
    await dispatcher.close();
  }
}

/** The floor: the claiming statement alone, in a transaction, from a pg client per agent. */
async function sqlLoop(url: string): Promise<{ ids: string[]; latencies: number[] }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const ids: string[] = [];
  const latencies: number[] = [];
  try {
    for (;;) {
      const start = performance.now();
      await client.query("BEGIN");
      const { rows } = await client.query<{ id: string }>(
        `WITH next AS (SELECT id FROM scans WHERE status = 'queued' AND scan_type::text = ANY($1::text[]) ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
         UPDATE scans s SET status = 'running', started_at = now(), lease_owner = 'floor', agent = 'floor', lease_id = gen_random_uuid(),
                lease_seconds = 300, lease_expires_at = now() + interval '300 seconds', run_attempts = s.run_attempts + 1
           FROM next WHERE s.id = next.id RETURNING s.id::text AS id`,
        [["sast", "sca"]],
      );
      await client.query("COMMIT");
      latencies.push(performance.now() - start);
      if (rows.length === 0) return { ids, latencies };
      ids.push(rows[0]!.id);
    }
  } finally {
    await client.end();
  }
}

function checkOnce(label: string, results: { ids: string[] }[], expected: readonly string[]): void {
  const all = results.flatMap((r) => r.ids);
  const distinct = new Set(all);
  const missing = expected.filter((id) => !distinct.has(id)).length;
  console.log(
    `${label}: ${all.length} claimed, ${distinct.size} distinct, ${missing} never claimed, per agent ${results.map((r) => r.ids.length).join(" / ")}`,
  );
  if (all.length !== expected.length || distinct.size !== expected.length || missing !== 0)
    throw new Error(`${label}: not every scan was claimed exactly once`);
}

export async function runScanClaimBench(): Promise<void> {
  const db = await benchDatabase();
  const profile = process.env.BENCH_CPU_PROF_DIR
    ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`]
    : [];
  const service = await startServiceProcess({
    env: {
      DATABASE_URL: db.url,
      NODE_ENV: "production",
      AUTH_JWT_SECRET: SECRET,
      WEBHOOK_SECRET_KEYS: Buffer.alloc(32, 7).toString("base64"),
      LOG_LEVEL: "silent",
      RATE_LIMIT_PER_MINUTE: "100000000",
      SCAN_ENGINES: "sast:external,sca:external",
    },
    nodeArgs: [...profile, ...extraServiceFlags()],
  });
  const base = service.baseUrl;
  try {
    const admin = {
      authorization: `Bearer ${await mintToken({ secret: SECRET, sub: "bench", scopes: ["admin"] })}`,
      "content-type": "application/json",
    };
    const queued: string[] = [];
    for (let i = 0; queued.length < SCANS; i++) {
      const app = (await (
        await fetch(`${base}/applications`, {
          method: "POST",
          headers: admin,
          body: JSON.stringify({ name: `claims-${i}` }),
        })
      ).json()) as { id: string };
      for (const scanType of ["sast", "sca"].slice(0, SCANS - queued.length)) {
        const scan = (await (
          await fetch(`${base}/applications/${app.id}/scans`, {
            method: "POST",
            headers: admin,
            body: JSON.stringify({ scanType }),
          })
        ).json()) as { id: string };
        queued.push(scan.id);
      }
    }
    console.log(
      `${queued.length} scans queued (sast and sca, SCAN_ENGINES external); ${AGENTS} agents claim them over HTTP, then ${AGENTS} pg clients run the claiming statement alone`,
    );

    const tokens = await Promise.all(
      Array.from({ length: AGENTS }, (_, i) =>
        mintToken({ secret: SECRET, sub: `bench-agent-${i}`, scopes: ["scans:run"] }),
      ),
    );
    const cpuBefore = cpuSeconds([service.child.pid!]);
    let start = performance.now();
    const agents = await Promise.all(tokens.map((token, i) => agentLoop(base, token, `bench-agent-${i}`)));
    const agentsMs = performance.now() - start;
    const cpuMsPerClaim = ((cpuSeconds([service.child.pid!]) - cpuBefore) * 1000) / queued.length;
    checkOnce("service", agents, queued);

    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    await pool.query(
      `UPDATE scans SET status = 'queued', started_at = NULL, lease_owner = NULL, lease_expires_at = NULL, agent = NULL, lease_id = NULL, lease_seconds = NULL, run_attempts = 0`,
    );
    await pool.end();
    start = performance.now();
    const floor = await Promise.all(Array.from({ length: AGENTS }, () => sqlLoop(db.url)));
    const floorMs = performance.now() - start;
    checkOnce("floor", floor, queued);

    console.log("");
    console.log(`| ${AGENTS} claimers, ${queued.length} scans | claims | p50 ms | p99 ms | max ms |`);
    console.log("|---|---:|---:|---:|---:|");
    for (const [label, results, wall] of [
      ["POST /scan-jobs/claim (service)", agents, agentsMs],
      ["claiming UPDATE alone (pg)", floor, floorMs],
    ] as const) {
      const sorted = results.flatMap((r) => r.latencies).sort((a, b) => a - b);
      console.log(
        `| ${label} | ${sorted.length} (${Math.round(sorted.length / (wall / 1000))}/s) | ${ms(percentile(sorted, 50))} | ${ms(percentile(sorted, 99))} | ${ms(sorted.at(-1)!)} |`,
      );
    }
    console.log(
      `\nservice: ${summary(
        agents.flatMap((r) => r.latencies),
        agentsMs,
      )}; its CPU per claim ${cpuMsPerClaim.toFixed(2)} ms`,
    );
  } finally {
    service.child.kill("SIGTERM");
    await service.exited;
    await db.stop();
  }
}
