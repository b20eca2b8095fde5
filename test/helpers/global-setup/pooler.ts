// The pooler project: the integration tests of the doors, the dispatcher and the event log, and
// the race through the pooler, with Debian's PgBouncer in transaction mode in front of the run's
// Postgres (steps.ts): the service's DATABASE_URL goes through it, DATABASE_DIRECT_URL does not.
// The build too, for the compiled service behind it.
import { buildAll, testDatabase } from "./steps.ts";

export default async function poolerSetup(): Promise<void> {
  process.env.TEST_POOLER ??= "pgbouncer";
  buildAll();
  await testDatabase();
}
