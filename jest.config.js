import { availableParallelism } from "node:os";

// Five projects, each with only the set-up its tests need (jest runs a project's globalSetup only
// when one of its tests is in the run): `npm run test:<project>` runs one, `npm test` all but the
// pooler.
//   unit         pure functions: no database, no build
//   integration  real Postgres and real servers in the test process: the database
//   process      the service (dist/main.js, `npm start`) or the agent (dist/agent/main.js) in
//                a process of its own: the build and the database
//   pooler       integration files again and test/pooler/, behind Debian's PgBouncer in
//                transaction mode: the build, the database and pgbouncer (which .ci/run installs)
//   browser      the console in a real Chromium: the console's build, the database and a browser
// `npm run test:<project>` names its project in TEST_PROJECT, not with --selectProjects, which
// would take the file names given after it for more project names.

/** The integration tests that start the compiled service or agent; the others run from the sources. */
const COMPILED = ["body-limits", "deadline-crash", "scan-agent", "webhook-crash"];

/**
 * The integration tests that run again behind PgBouncer in transaction mode (the pooler project):
 * the doors (REST, GraphQL, subscriptions), the webhook dispatcher and the event log.
 */
const THROUGH_POOLER = [
  "applications",
  "policies",
  "webhooks",
  "scans",
  "scan-reports",
  "vex",
  "sla",
  "audit-trail",
  "every-door",
  "graphql-applications",
  "graphql-dashboard",
  "graphql-policies-webhooks",
  "graphql-subscriptions",
  "graphql-subscription-arguments",
  "webhook-dispatcher",
  "webhook-recover",
  "record-outcomes",
  "outbox-notify",
  "listen",
  "multi-instance",
  "events",
  "event-replay",
  "event-resume",
  "event-log-order.property",
];

const base = {
  rootDir: import.meta.dirname,
  testEnvironment: "node",
  extensionsToTreatAsEsm: [".ts"],
  transform: {
    "^.+\\.ts$": [
      "@swc/jest",
      { jsc: { parser: { syntax: "typescript" }, target: "es2022" }, module: { type: "es6" } },
    ],
  },
};
const globalTeardown = "<rootDir>/test/helpers/global-setup/teardown.ts";

const projects = [
  { ...base, displayName: "unit", testMatch: ["<rootDir>/test/unit/**/*.test.ts"] },
  {
    ...base,
    displayName: "integration",
    testMatch: ["<rootDir>/test/integration/**/*.test.ts"],
    testPathIgnorePatterns: ["/node_modules/", `/test/integration/(${COMPILED.join("|")})\\.test\\.ts$`],
    // The package's published verifier, which the webhook tests check deliveries with, from its
    // source: the process project imports the compiled one (webhook-crash.test.ts).
    moduleNameMapper: { "^appsec-service/webhook-verify$": "<rootDir>/src/webhooks/verify-delivery.ts" },
    globalSetup: "<rootDir>/test/helpers/global-setup/integration.ts",
    globalTeardown,
  },
  {
    ...base,
    displayName: "process",
    testMatch: [
      "<rootDir>/test/e2e/**/*.test.ts",
      ...COMPILED.map((name) => `<rootDir>/test/integration/${name}.test.ts`),
    ],
    globalSetup: "<rootDir>/test/helpers/global-setup/process.ts",
    globalTeardown,
  },
  {
    // Not in `npm test` (it needs Debian's PgBouncer): `npm run test:pooler`, which .ci/run runs.
    ...base,
    displayName: "pooler",
    testMatch: [
      "<rootDir>/test/pooler/**/*.test.ts",
      ...THROUGH_POOLER.map((name) => `<rootDir>/test/integration/${name}.test.ts`),
    ],
    moduleNameMapper: { "^appsec-service/webhook-verify$": "<rootDir>/src/webhooks/verify-delivery.ts" },
    globalSetup: "<rootDir>/test/helpers/global-setup/pooler.ts",
    globalTeardown,
  },
  {
    ...base,
    displayName: "browser",
    testMatch: ["<rootDir>/test/browser/**/*.test.ts"],
    globalSetup: "<rootDir>/test/helpers/global-setup/browser.ts",
    globalTeardown,
  },
];

const only = process.env.TEST_PROJECT;
if (only && !projects.some((p) => p.displayName === only))
  throw new Error(`TEST_PROJECT=${only}: no such project (${projects.map((p) => p.displayName).join(", ")})`);

/** @type {import('jest').Config} */
export default {
  rootDir: import.meta.dirname,
  // Tests wait on Postgres and on servers more than they compute: jest's default of one worker per
  // core but one left a 2-core machine half idle (the whole run: 412 s with one worker, 216 s with two).
  maxWorkers: Math.max(2, availableParallelism() - 1),
  testTimeout: 30000,
  reporters: ["default", "<rootDir>/test/helpers/totals-reporter.js"],
  projects: projects.filter((p) => (only ? p.displayName === only : p.displayName !== "pooler")),
};
