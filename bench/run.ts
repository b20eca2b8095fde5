// Benchmarks: `npm run bench` runs them all; `npm run bench -- rest`, `-- subscribers`, `-- webhooks`,
// `-- reports` or `-- events` one suite.
// Each starts the real service on a fresh database (embedded Postgres, or DATABASE_URL's server).
//   BENCH_SECONDS=20 npm run bench -- rest     (longer REST runs)
import os from "node:os";
import { runEventsBench } from "./events.ts";
import { runReportBench } from "./reports.ts";
import { runRestBench } from "./rest.ts";
import { runSubscriberBench } from "./subscribers.ts";
import { runWebhookBench } from "./webhooks.ts";

const suites = { rest: runRestBench, subscribers: runSubscriberBench, webhooks: runWebhookBench, reports: runReportBench, events: runEventsBench };
const chosen = process.argv.slice(2);
for (const name of chosen) if (!(name in suites)) throw new Error(`unknown suite ${name}; choose from ${Object.keys(suites).join(", ")}`);

console.log(`${new Date().toISOString()}, node ${process.version}, ${os.cpus().length} CPUs, database ${process.env.DATABASE_URL ? "DATABASE_URL" : "embedded"}`);
for (const [name, run] of Object.entries(suites)) {
  if (chosen.length && !chosen.includes(name)) continue;
  console.log(`\n## ${name}\n`);
  await run();
}
