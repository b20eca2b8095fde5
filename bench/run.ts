// Benchmarks: `npm run bench` runs them all; `npm run bench -- rest`, `-- subscribers`, `-- webhooks`,
// `-- reports`, `-- dast`, `-- vex`, `-- events`, `-- console`, `-- teams`, `-- sla` or `-- pooler` one suite.
// Each starts the real service on a fresh database (embedded Postgres, or DATABASE_URL's server).
//   BENCH_SECONDS=20 npm run bench -- rest     (longer REST runs)
import os from "node:os";
import { runConsoleBench } from "./console.ts";
import { runBaselineScanBench } from "./dast-baseline.ts";
import { runEventsBench } from "./events.ts";
import { runPoolerBench } from "./pooler.ts";
import { runReportBench } from "./reports.ts";
import { runRestBench } from "./rest.ts";
import { runScanClaimBench } from "./scan-claims.ts";
import { runSlaBench } from "./sla.ts";
import { runSubscriberBench } from "./subscribers.ts";
import { runTeamsBench } from "./teams.ts";
import { runVexBench } from "./vex.ts";
import { runWebhookBench } from "./webhooks.ts";

/** Real scans (issue 21): a baseline scan through the service, then agents claiming scans. */
const runDastBench = async () => {
  await runBaselineScanBench();
  await runScanClaimBench();
};

const suites = {
  rest: runRestBench,
  subscribers: runSubscriberBench,
  webhooks: runWebhookBench,
  reports: runReportBench,
  dast: runDastBench,
  vex: runVexBench,
  events: runEventsBench,
  console: runConsoleBench,
  teams: runTeamsBench,
  sla: runSlaBench,
  pooler: runPoolerBench,
};
const chosen = process.argv.slice(2);
for (const name of chosen)
  if (!(name in suites)) throw new Error(`unknown suite ${name}; choose from ${Object.keys(suites).join(", ")}`);

console.log(
  `${new Date().toISOString()}, node ${process.version}, ${os.cpus().length} CPUs, database ${process.env.DATABASE_URL ? "DATABASE_URL" : "embedded"}`,
);
for (const [name, run] of Object.entries(suites)) {
  if (chosen.length && !chosen.includes(name)) continue;
  console.log(`\n## ${name}\n`);
  await run();
}
