// A real Chromium (Debian's package, never a downloaded build) driven by playwright-core, and what
// the console's tests check on every view: axe-core's serious and critical violations, horizontal
// overflow at 375 px, requests to other origins.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";

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

export function chromiumPath(): string {
  try {
    return execFileSync("sh", ["-c", "command -v chromium"], { encoding: "utf8" }).trim();
  } catch {
    throw new Error("Chromium is missing: apt-get install -y chromium (.ci/run installs it)");
  }
}

/** One browser per test file; each launch has a fresh temporary profile. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), args: ARGS });
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
  const context = await browser.newContext({ viewport: { width: options.width ?? 1280, height: 800 } });
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
