// Every project's globalTeardown (jest runs one file once): undoes what the set-up started.
import { dropTestDatabase } from "./steps.ts";

export default async function globalTeardown(): Promise<void> {
  await dropTestDatabase();
}
