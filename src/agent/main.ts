#!/usr/bin/env node
// appsec-agent --config agent.json [--name <name>]   (npm run agent -- --config agent.json)
// Runs the scans the service hands to agents (docs/spec/CONTRACT.md §12) with the tools of this machine:
// APPSEC_URL (default http://localhost:8080) and APPSEC_TOKEN (scope scans:run), or
// OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET (the client credentials grant, CONTRACT §18;
// OIDC_SCOPES, default scans:run, and OIDC_RESOURCE as the provider wants them), from the
// environment, LOG_LEVEL for its JSON logs. SIGTERM or SIGINT: no new claims, scans in progress
// finish within the grace or are handed back, then exit 0; a second signal hands them back at once.
// A client of the REST API only: nothing here reads the service's database or domain.
import os from "node:os";
import { parseArgs } from "node:util";
import { machineTokensFromEnv } from "../auth/machine-tokens.ts";
import { createLogger } from "../log.ts";
import { AgentConfigError, loadAgentConfig, type ScanType } from "./agent-config.ts";
import { createAgent } from "./agent.ts";
import { createApiClient } from "./api-client.ts";
import { createExecutor } from "./create-executor.ts";
import type { Executor } from "./executor.ts";

const USAGE =
  "Usage: appsec-agent --config <agent.json> [--name <agent name>]   (APPSEC_URL, and APPSEC_TOKEN or OIDC_ISSUER/OIDC_CLIENT_ID/OIDC_CLIENT_SECRET in the environment)";

function exit(message: string, code = 2): never {
  console.error(message);
  process.exit(code);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      config: { type: "string", short: "c" },
      name: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  }));
} catch (err) {
  exit(`${(err as Error).message}\n${USAGE}`);
}
if (values.help) exit(USAGE, 0);
if (!values.config) exit(USAGE);
const tokens = machineTokensFromEnv(process.env, {
  scope: "scans:run",
  tokenHint: "npm run token -- --scope scans:run --sub agent-1",
});
if (typeof tokens === "string") exit(tokens);
const baseUrl = process.env["APPSEC_URL"] || "http://localhost:8080";
try {
  new URL(baseUrl);
} catch {
  exit(`APPSEC_URL is not a URL: ${baseUrl}`);
}

let executors: Map<ScanType, Executor>;
let config;
try {
  config = await loadAgentConfig(values.config);
  executors = new Map(
    Object.entries(config.executors).map(([type, executor]) => [type as ScanType, createExecutor(executor!)]),
  );
} catch (err) {
  if (err instanceof AgentConfigError) exit(err.message);
  throw err;
}

const log = createLogger(process.env["LOG_LEVEL"] || "info");
const agent = createAgent({
  api: createApiClient(baseUrl, tokens),
  executors,
  name: values.name ?? config.name ?? os.hostname(),
  concurrency: config.concurrency,
  leaseSeconds: config.leaseSeconds,
  shutdownGraceMs: config.shutdownGraceSeconds * 1000,
  workRoot: config.workDir,
  log,
});
let signals = 0;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    log.info({ signal }, "signal received");
    if (signals++ === 0) agent.stop();
    else agent.stopNow();
  });
}
const fatal = await agent.run();
if (fatal) {
  console.error(fatal.message);
  process.exit(1);
}
process.exit(0);
