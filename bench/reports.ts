// Ingesting a scanner's report at the size limit: a SARIF log of 100,000 results, just under
// 50 MiB, uploaded to the real service (`dist/main.js`, its own process) on a fresh database.
// Prints the upload's time (first: every finding new; again: every finding seen again) and the
// service's peak resident memory (VmHWM) against its resident memory before, the main thread's
// largest heap and buffers meanwhile (the rest of the peak is the report threads'), and the slowest
// GET /healthz answer during the upload (how long the event loop was blocked), with the time this
// process takes merely to JSON.parse the same bytes as the floor. BENCH_CPU_PROF_DIR=dir writes the
// service's CPU profile there; BENCH_SERVICE_FLAGS are Node flags for the service
// (`--max-old-space-size=128`: does the upload fit in that heap?).
import { randomBytes } from "node:crypto";
import { spawn } from "node:child_process";
import { mintToken } from "../src/auth/mint-token.ts";
import { benchDatabase } from "./database.ts";
import { memoryOf } from "./process-memory.ts";
import { serviceFlags } from "./service-flags.ts";
import { untilReady } from "./until-ready.ts";

const RESULTS = Number(process.env.BENCH_REPORT_RESULTS ?? 100_000);
const TARGET_BYTES = 50 * 1024 * 1024 - 64 * 1024;
const SECRET = "bench-secret-bench-secret-bench-secret-00";
const PORT = Number(process.env.BENCH_PORT ?? 18182);

/** A SARIF log as a SAST tool writes it, its messages sized so the whole is just under 50 MiB. */
function bigSarif(results: number, messageLength: number): string {
  const rules = Array.from({ length: 200 }, (_, i) => ({
    id: `bench/rule-${i}`,
    shortDescription: { text: `Rule ${i}: untrusted data reaches a sensitive sink` },
    properties: {
      tags: ["security", `external/cwe/cwe-${79 + (i % 50)}`],
      "security-severity": String(((i % 90) + 10) / 10),
    },
  }));
  const filler = "x".repeat(messageLength);
  return JSON.stringify({
    version: "2.1.0",
    runs: [
      {
        tool: { driver: { name: "BenchScanner", version: "1.0.0", rules } },
        results: Array.from({ length: results }, (_, i) => ({
          ruleId: `bench/rule-${i % 200}`,
          ruleIndex: i % 200,
          level: "warning",
          message: { text: `Finding ${i}: ${filler}` },
          locations: [
            {
              physicalLocation: {
                artifactLocation: { uri: `src/module-${i % 5000}/file-${i}.ts` },
                region: { startLine: (i % 900) + 1 },
              },
            },
          ],
          partialFingerprints: { primaryLocationLineHash: `${i.toString(16)}:1` },
        })),
      },
    ],
  });
}

function sizedSarif(): string {
  const probe = bigSarif(RESULTS, 0).length;
  const perResult = Math.max(0, Math.floor((TARGET_BYTES - probe) / RESULTS));
  return bigSarif(RESULTS, perResult);
}

/** The main thread's V8 heap (held) and its memory outside V8 (buffers), in MiB, from the service's /metrics. */
async function mainThreadMemory(base: string): Promise<{ heap: number; used: number; external: number }> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const mib = (name: string) => Math.round(Number(new RegExp(`^${name} (\\S+)`, "m").exec(text)?.[1] ?? 0) / 2 ** 20);
  return {
    heap: mib("nodejs_heap_size_total_bytes"),
    used: mib("nodejs_heap_size_used_bytes"),
    external: mib("nodejs_external_memory_bytes"),
  };
}

/**
 * While `work` runs, asks GET /healthz every 20 ms: the slowest answer shows how long the event
 * loop was blocked. Every fifth time it also reads the main thread's memory, to tell the main
 * thread's share of the peak from the report threads'.
 */
async function probeDuring<T>(
  base: string,
  work: Promise<T>,
): Promise<{ result: T; slowestMs: number; mainHeap: number; mainUsed: number; mainExternal: number }> {
  let done = false;
  let slowestMs = 0;
  let mainHeap = 0;
  let mainUsed = 0;
  let mainExternal = 0;
  const probe = (async () => {
    for (let i = 0; !done; i++) {
      const start = performance.now();
      await fetch(`${base}/healthz`).then((r) => r.arrayBuffer());
      slowestMs = Math.max(slowestMs, performance.now() - start);
      if (i % 5 === 0) {
        const memory = await mainThreadMemory(base);
        mainHeap = Math.max(mainHeap, memory.heap);
        mainUsed = Math.max(mainUsed, memory.used);
        mainExternal = Math.max(mainExternal, memory.external);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  try {
    return { result: await work, slowestMs, mainHeap, mainUsed, mainExternal };
  } finally {
    done = true;
    await probe;
  }
}

export async function runReportBench(): Promise<void> {
  const db = await benchDatabase();
  const profile = process.env.BENCH_CPU_PROF_DIR
    ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`]
    : [];
  const server = spawn(process.execPath, [...profile, ...serviceFlags(), "dist/main.js"], {
    env: {
      ...process.env,
      DATABASE_URL: db.url,
      PORT: String(PORT),
      HOST: "127.0.0.1",
      NODE_ENV: "production",
      AUTH_JWT_SECRET: SECRET,
      WEBHOOK_SECRET_KEYS: randomBytes(32).toString("base64"),
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "silent",
    },
    stdio: ["ignore", process.env.BENCH_LOG_LEVEL ? "inherit" : "ignore", "inherit"],
  });
  const base = `http://127.0.0.1:${PORT}`;
  try {
    await untilReady(base);
    const headers = { authorization: `Bearer ${await mintToken({ secret: SECRET, sub: "bench", scopes: ["admin"] })}` };
    const app = (await (
      await fetch(`${base}/applications`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ name: "bench-reports" }),
      })
    ).json()) as { id: string };

    const report = sizedSarif();
    const bytes = Buffer.byteLength(report);
    const parseStart = performance.now();
    JSON.parse(report);
    const parseMs = performance.now() - parseStart;
    console.log(
      `SARIF: ${RESULTS.toLocaleString("en")} results, ${(bytes / 2 ** 20).toFixed(1)} MiB; JSON.parse alone in this process: ${parseMs.toFixed(0)} ms`,
    );

    const before = await memoryOf(server.pid!);
    console.log(`service RSS before: ${before.now} MiB (peak so far ${before.peak} MiB)`);
    for (const round of ["first upload (all new)", "same report again (all seen)"]) {
      const start = performance.now();
      const upload = fetch(`${base}/applications/${app.id}/scan-reports`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/sarif+json" },
        body: report,
      });
      const { result: res, slowestMs, mainHeap, mainUsed, mainExternal } = await probeDuring(base, upload);
      const body = (await res.json()) as { status?: string; summary?: { totalFindings: number }; detail?: string };
      const ms = performance.now() - start;
      if (res.status !== 202) throw new Error(`upload answered ${res.status}: ${body.detail}`);
      const memory = await memoryOf(server.pid!);
      console.log(
        `${round}: ${res.status} ${body.status}, ${body.summary?.totalFindings} findings in ${(ms / 1000).toFixed(1)} s (${(ms / parseMs).toFixed(0)}× the parse); service peak RSS ${memory.peak} MiB (main thread at most: heap ${mainHeap} held, ${mainUsed} used, buffers ${mainExternal}), RSS after ${memory.now} MiB; slowest GET /healthz meanwhile ${slowestMs.toFixed(0)} ms`,
      );
    }
    await new Promise((r) => setTimeout(r, 15_000));
    console.log(`service RSS 15 s later (the report threads have ended): ${(await memoryOf(server.pid!)).now} MiB`);
  } finally {
    server.kill("SIGTERM");
    await new Promise((r) => server.once("exit", r));
    await db.stop();
  }
}
