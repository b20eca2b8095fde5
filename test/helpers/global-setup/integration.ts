// The integration project: real Postgres; the service runs inside the test process, from the sources.
import { testDatabase } from "./steps.ts";

export default async function integrationSetup(): Promise<void> {
  await testDatabase();
}
