// The process project: the service and the agent run as `npm start` and `appsec-agent` run them,
// from the compiled build, against the run's Postgres.
import { buildAll, testDatabase } from "./steps.ts";

export default async function processSetup(): Promise<void> {
  buildAll();
  await testDatabase();
}
