// A real Chromium driven by playwright-core, and what the console's tests check on every view:
// axe-core's serious and critical violations, horizontal overflow at 375 px, requests to other
// origins.
//
// Which Chromium: Debian's package when `chromium` is on the PATH (.ci/run installs it); else the
// one the registry package @sparticuz/chromium (an exact-pinned devDependency) ships inside itself
// as a compressed binary, so `npm ci && npm test` needs nothing more. Never a browser downloaded
// from elsewhere (playwright's own builds come from a CDN). The browser project's global set-up
// picks it once, unpacks the registry's build if needed, and prints one line saying which.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { oneLineError } from "./required-tool.ts";

/** Without the background-networking flags Chromium keeps calling Google's services: refused here. */
const ARGS = [
  "--no-sandbox",
  "--headless",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/**
 * @sparticuz/chromium's flags are tuned for AWS Lambda; these would make its browser unlike a
 * user's, so they are left out: --single-process (closing one browser context there ends the
 * whole browser, seen here), the switches that turn off the same-origin policy, mixed-content
 * blocking and site isolation, and its feature lists (site isolation off, SharedArrayBuffer on
 * without cross-origin isolation), which would also compete with playwright's own lists.
 */
const LAMBDA_ONLY = [
  "--single-process",
  "--disable-web-security",
  "--allow-running-insecure-content",
  "--disable-site-isolation-trials",
  "--disable-features=",
  "--enable-features=",
];

interface ChromiumChoice {
  executablePath: string;
  args: string[];
  /** Which browser, in a few words. */
  name: string;
}

/** Where `command` is on the PATH, if it is. */
function onPath(command: string): string | undefined {
  try {
    return execFileSync("sh", ["-c", `command -v ${command}`], { encoding: "utf8" }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Unpacks the registry's Chromium (about 10 s, once per install: under node_modules/.cache, so
 * `npm ci` starts afresh) and returns its binary. The package unpacks into os.tmpdir(), and reuses
 * whatever `chromium` it finds there whatever its version: it is pointed at a fresh directory that
 * is renamed into place only once complete, so a concurrent or interrupted run never sees half a
 * browser.
 */
async function unpackRegistryChromium(): Promise<{ executablePath: string; args: string[]; version: string }> {
  const entry = createRequire(import.meta.url).resolve("@sparticuz/chromium");
  const packageDir = path.dirname(path.dirname(entry));
  const { version } = JSON.parse(readFileSync(path.join(packageDir, "package.json"), "utf8")) as { version: string };
  const { default: Sparticuz } = await import("@sparticuz/chromium");
  const root = path.resolve(packageDir, "../../.cache/sparticuz-chromium");
  const dir = path.join(root, version);
  if (!existsSync(path.join(dir, "chromium"))) {
    const partial = `${dir}.partial-${process.pid}`;
    await rm(partial, { recursive: true, force: true });
    await mkdir(partial, { recursive: true });
    const tmpdir = process.env.TMPDIR;
    process.env.TMPDIR = partial; // os.tmpdir() reads it on every call
    try {
      await Sparticuz.executablePath();
    } finally {
      if (tmpdir === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmpdir;
    }
    await rename(partial, dir).catch(async (err: unknown) => {
      if (!existsSync(path.join(dir, "chromium"))) throw err;
      await rm(partial, { recursive: true, force: true }); // another run finished first
    });
  }
  const args = Sparticuz.args.filter(
    (arg) => !LAMBDA_ONLY.some((flag) => arg === flag || (flag.endsWith("=") && arg.startsWith(flag))),
  );
  return { executablePath: path.join(dir, "chromium"), args, version };
}

async function chooseChromium(): Promise<ChromiumChoice> {
  const debian = onPath("chromium");
  if (debian) {
    const version = execFileSync(debian, ["--version"], { encoding: "utf8" }).trim();
    return { executablePath: debian, args: ARGS, name: `Debian's ${version} (${debian})` };
  }
  try {
    const registry = await unpackRegistryChromium();
    return {
      executablePath: registry.executablePath,
      args: [...new Set([...registry.args, ...ARGS])],
      name: `Chromium from the registry package @sparticuz/chromium@${registry.version} (no chromium on the PATH)`,
    };
  } catch (err) {
    throw oneLineError(
      `Chromium is missing: apt-get install -y chromium (.ci/run installs it), or npm ci for @sparticuz/chromium (${(err as Error).message})`,
    );
  }
}

/**
 * For the browser project's global set-up: chooses and prepares the browser, hands it to the test
 * workers (through the environment they inherit) and says which it is. When there is none, every
 * browser test fails at once with that one line.
 */
export async function prepareChromium(): Promise<string> {
  try {
    const choice = await chooseChromium();
    process.env.TEST_CHROMIUM = JSON.stringify(choice);
    return choice.name;
  } catch (err) {
    process.env.TEST_CHROMIUM_MISSING = (err as Error).message;
    return `none: ${(err as Error).message}`;
  }
}

if (process.env.TEST_CHROMIUM_MISSING) throw oneLineError(process.env.TEST_CHROMIUM_MISSING);

/** One browser per test file; each launch has a fresh temporary profile. */
export async function launchBrowser(): Promise<Browser> {
  const chosen = process.env.TEST_CHROMIUM;
  if (!chosen)
    throw oneLineError(
      "No browser chosen: run the browser tests through jest's browser project (npm run test:browser)",
    );
  const { executablePath, args } = JSON.parse(chosen) as ChromiumChoice;
  return chromium.launch({ executablePath, args });
}

export interface ConsolePage {
  context: BrowserContext;
  page: Page;
  /** Every URL the page asked for outside `origin`. */
  foreignRequests: string[];
  /** Uncaught errors and console errors, CSP violations included. */
  problems: string[];
}

export async function openPage(
  browser: Browser,
  origin: string,
  options: { width?: number } = {},
): Promise<ConsolePage> {
  // The language a user's browser reports, whatever the machine's: under LANG=C.UTF-8 the
  // registry's Chromium (a headless shell) reports "en-US@posix", which is no BCP 47 tag, and
  // uPlot's `new Intl.NumberFormat(navigator.language)` throws on it, so the trend chart never loaded.
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: 800 },
    locale: "en-US",
  });
  // Well under jest's 30 s, so a view that never shows fails with the locator that waited.
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  const foreignRequests: string[] = [];
  const problems: string[] = [];
  page.on("request", (request) => {
    const url = request.url();
    if (/^(data|blob):/.test(url)) return; // no network: GraphiQL's embedded fonts, its workers
    if (!url.startsWith(origin + "/") && !url.startsWith(origin.replace(/^http/, "ws") + "/"))
      foreignRequests.push(url);
  });
  page.on("pageerror", (err) => problems.push(`pageerror: ${err.message}`));
  page.on("console", (message) => {
    // The browser's own lines about refused requests and connections (a 401 on purpose, a cut
    // network) are not the page's errors.
    if (message.type() === "error" && !/Failed to load resource|WebSocket connection to .* failed/.test(message.text()))
      problems.push(`console: ${message.text()}`);
  });
  return { context, page, foreignRequests, problems };
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  nodes: string[];
}

/**
 * axe-core's serious and critical violations on the page as it is. axe is evaluated through the
 * DevTools protocol: the console's CSP rightly refuses an injected inline <script>.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: any[] }> } }
    ).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n: { target: string[] }) => n.target.join(" ")),
    }));
  });
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/**
 * Where a suite's screenshot of a view is written, for a person to look at: under the directory
 * CONSOLE_SCREENSHOTS names, in a folder per suite; without it, nowhere (a run leaves no files).
 */
export function screenshotPath(suite: string, view: string): string | undefined {
  const root = process.env.CONSOLE_SCREENSHOTS;
  // page.screenshot makes the folders it writes into.
  return root ? path.resolve(root, suite, `${view.replace(/[^\w-]+/g, "-")}.png`) : undefined;
}

/** At 375 px wide: whether the document scrolls sideways (it must not), with a screenshot taken when given a path. */
export async function overflowAt375(
  page: Page,
  screenshotFile?: string,
): Promise<{ scrollWidth: number; innerWidth: number }> {
  const before = page.viewportSize();
  await page.setViewportSize({ width: 375, height: 800 });
  if (screenshotFile) await page.screenshot({ path: screenshotFile, fullPage: true });
  const sizes = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
  }));
  if (before) await page.setViewportSize(before);
  return sizes;
}

/** Presses Tab until the focused element matches `matches` (bounded), as a keyboard user would. */
export async function tabTo(
  page: Page,
  describe: string,
  matches: (el: { tag: string; name: string; role: string | null }) => boolean,
  maxPresses = 40,
): Promise<void> {
  for (let i = 0; i < maxPresses; i++) {
    await page.keyboard.press("Tab");
    const focused = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      if (!el) return { tag: "", name: "", role: null };
      const label = el.id ? document.querySelector(`label[for="${el.id}"]`)?.textContent : null;
      return {
        tag: el.tagName.toLowerCase(),
        name: (el.getAttribute("aria-label") ?? label ?? el.textContent ?? "").trim(),
        role: el.getAttribute("role"),
      };
    });
    if (matches(focused)) return;
  }
  throw new Error(`Tab never reached ${describe}`);
}

/** Closes the pages a test opened, each checked first: no request to another origin, no error. */
export async function closeCheckedPages(opened: ConsolePage[]): Promise<void> {
  for (const p of opened.splice(0)) {
    expect(p.foreignRequests).toEqual([]);
    expect(p.problems).toEqual([]);
    await p.context.close();
  }
}
