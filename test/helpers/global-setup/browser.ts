// The browser project: the console's build (served by the in-process service), the run's Postgres
// and a Chromium (test/helpers/browser.ts says which), named in one line as the project starts.
import { prepareChromium } from "../browser.ts";
import { buildConsole, testDatabase } from "./steps.ts";

export default async function browserSetup(): Promise<void> {
  buildConsole();
  const [chromium] = await Promise.all([prepareChromium(), testDatabase()]);
  process.stderr.write(`browser tests: ${chromium}\n`);
}
