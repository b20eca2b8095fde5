// Team access (CONTRACT §17): what confining a token to its teams costs a read. 2,000 applications
// over 50 teams; team-7's newest 20 scanned (sast and sca). Each read of the same rows is loaded with
// an org-wide token and with team-7's, alternated five times (BENCH_SECONDS each), and the ratio of
// the medians printed: REST GET /applications/{id}, the application's vulnerability list, and the
// GraphQL dashboard of team-7's applications (the org-wide reader filters on owner to read the same).
import autocannon from "autocannon";
import { startBenchService } from "./bench-service.ts";
import { runTeamsLiveBench } from "./teams-live.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const APPLICATIONS = 2_000;
const TEAMS = 50;
const RUNS = Number(process.env.BENCH_TEAMS_RUNS ?? 5);

const DASHBOARD_QUERY = `{
  applications(first: 20, filter: { owner: "team-7" }) {
    totalCount
    edges { node {
      name criticality
      vulnerabilityCounts { total unresolvedBySeverity { critical high medium low } }
      latestScans { scanType status summary { totalFindings } }
      vulnerabilities(first: 10) { totalCount edges { node { title severity cvssScore } } }
    } }
  }
}`;

export async function runTeamsBench(): Promise<void> {
  const bench = await startBenchService({
    AUTH_TEAMS_CLAIM: "teams",
    AUTH_ORG_WIDE_TEAMS: "appsec",
    SCAN_DURATION_MS: "20",
  });
  const base = bench.service.baseUrl;
  const orgWide = await bench.mint({
    sub: "appsec-lead",
    scopes: ["applications:read", "vulnerabilities:read", "scans:read"],
    teams: ["appsec"],
  });
  const confined = await bench.mint({
    sub: "team-7-dev",
    scopes: ["applications:read", "vulnerabilities:read", "scans:read"],
    teams: ["team-7"],
  });
  const admin = { authorization: `Bearer ${bench.token}`, "content-type": "application/json" };
  try {
    const teamSeven: string[] = [];
    for (let i = 0; i < APPLICATIONS; i++) {
      const owner = `team-${i % TEAMS}`;
      const res = await fetch(`${base}/applications`, {
        method: "POST",
        headers: admin,
        body: JSON.stringify({ name: `app-${i}`, owner, criticality: ["low", "medium", "high", "critical"][i % 4] }),
      });
      const { id } = (await res.json()) as { id: string };
      if (owner === "team-7") teamSeven.push(id);
    }
    const scanned = teamSeven.slice(-20);
    for (const id of scanned)
      for (const scanType of ["sast", "sca"])
        await fetch(`${base}/applications/${id}/scans`, {
          method: "POST",
          headers: admin,
          body: JSON.stringify({ scanType }),
        });
    for (const id of scanned) await untilScanned(base, admin, id);
    const target = scanned.at(-1)!;

    const reads = [
      { name: "GET /applications/{id}", url: `${base}/applications/${target}` },
      { name: "GET /applications/{id}/vulnerabilities", url: `${base}/applications/${target}/vulnerabilities` },
      {
        name: "POST /graphql dashboard (team-7's 20)",
        url: `${base}/graphql`,
        method: "POST" as const,
        body: JSON.stringify({ query: DASHBOARD_QUERY }),
      },
    ];
    console.log(
      `${APPLICATIONS} applications over ${TEAMS} teams; ${CONNECTIONS} connections, ${SECONDS} s a run, ${RUNS} runs alternated (org-wide, confined)`,
    );
    console.log(
      "| read | org-wide req/s (runs) | confined req/s (runs) | median ratio | org-wide p99 ms | confined p99 ms | median p99 ratio |",
    );
    console.log("|---|---|---|---:|---|---|---:|");
    for (const read of reads) {
      await sameAnswer(read, orgWide, confined);
      const runs = { orgWide: [] as autocannon.Result[], confined: [] as autocannon.Result[] };
      for (let run = 0; run < RUNS; run++) {
        // Alternated, and which goes first alternates too: both see the same machine.
        const order = run % 2 === 0 ? (["orgWide", "confined"] as const) : (["confined", "orgWide"] as const);
        for (const who of order) runs[who].push(await load(read, who === "orgWide" ? orgWide : confined));
      }
      const rps = (rs: autocannon.Result[]) => rs.map((r) => Math.round(r.requests.average));
      const p99 = (rs: autocannon.Result[]) => rs.map((r) => r.latency.p99);
      console.log(
        `| ${read.name} | ${rps(runs.orgWide).join(", ")} | ${rps(runs.confined).join(", ")} | ${(median(rps(runs.confined)) / median(rps(runs.orgWide))).toFixed(3)} | ${p99(runs.orgWide).join(", ")} | ${p99(runs.confined).join(", ")} | ${(median(p99(runs.confined)) / median(p99(runs.orgWide))).toFixed(3)} |`,
      );
    }
  } finally {
    await bench.stop();
  }
  console.log();
  await runTeamsLiveBench();
}

interface Read {
  name: string;
  url: string;
  method?: "POST";
  body?: string;
}

async function load(read: Read, token: string): Promise<autocannon.Result> {
  const result = await autocannon({
    url: read.url,
    method: read.method ?? "GET",
    body: read.body,
    connections: CONNECTIONS,
    duration: SECONDS,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
  });
  if (result.non2xx) throw new Error(`${read.name}: ${result.non2xx} answers not 2xx`);
  return result;
}

/** Both tokens must read the same rows, or the ratio compares different work. */
async function sameAnswer(read: Read, orgWide: string, confined: string): Promise<void> {
  const answer = async (token: string) =>
    (
      await fetch(read.url, {
        method: read.method ?? "GET",
        body: read.body,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      })
    ).text();
  const [a, b] = await Promise.all([answer(orgWide), answer(confined)]);
  if (a !== b || a.length < 100)
    throw new Error(`${read.name}: the two tokens read different answers:\n${a.slice(0, 300)}\n${b.slice(0, 300)}`);
}

async function untilScanned(base: string, headers: Record<string, string>, id: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const scans = (await (await fetch(`${base}/applications/${id}/scans`, { headers })).json()) as { status: string }[];
    if (scans.length === 2 && scans.every((s) => s.status === "completed")) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("seed scans did not complete");
}

const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
