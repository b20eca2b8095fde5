// The built-in passive DAST scan (docs/spec/CONTRACT.md §12), in the spirit of OWASP ZAP's baseline scan: crawl
// a site with GET requests only and report what ZAP's passive rules would on every answer, as a
// ZAP traditional JSON report. Needs neither the service's database nor its HTTP server, so the
// scan runner and the scan agent (run from another network) both call it.
import type { ResolveAll, TargetPolicy } from "../../net/ssrf-guard.ts";
import { crawl, type CrawlSummary } from "./crawl.ts";
import { PASSIVE_RULES } from "./passive-rules.ts";
import { ZapReportBuilder, type ZapReportDocument } from "./zap-report-builder.ts";

export { TargetUnreachableError } from "./target-unreachable.ts";
export type { CrawlSummary, ZapReportDocument };

/** The engine's name and version: the scan's `source.tool` and the findings' `tool`. */
export const BASELINE_ENGINE = { name: "appsec-baseline", version: "1.0.0" } as const;
export const DEFAULT_USER_AGENT = `appsec-service-baseline/${BASELINE_ENGINE.version} (passive DAST; GET only)`;
/**
 * The Origin every request carries, a name that can never be a real site: a server that echoes it
 * back with credentials allowed trusts any origin (rule 10098).
 */
export const PROBE_ORIGIN = "https://cors-probe.appsec-baseline.invalid";
export const MAX_BODY_BYTES = 2 * 1024 * 1024;

export interface BaselineScanOptions {
  /** Requests in all (pages, scripts, stylesheets, robots.txt, sitemaps); default 100. */
  maxPages?: number;
  /** Default 60 s; when it runs out the scan reports what it has seen. */
  maxDurationMs?: number;
  /** Requests at once; default 4. */
  concurrency?: number;
  /** Which non-public addresses the crawl may reach, checked on every request after DNS. */
  targetPolicy: TargetPolicy;
  userAgent?: string;
  /** Aborting it stops the scan: the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Longest one request may take, its answer's head and body together; default 10 s. */
  requestTimeoutMs?: number;
  /** Called once the crawl ends, with what it did. */
  onSummary?: (summary: CrawlSummary) => void;
  /** Extra trusted CAs (tests; in production NODE_EXTRA_CA_CERTS). */
  tls?: { ca?: string | Buffer };
  /** Name resolution (tests); dns.lookup by default. */
  resolveAll?: ResolveAll;
}

/**
 * Scans the origin of `serviceUrl` and returns the ZAP traditional JSON report of what the passive
 * rules found (no alerts for a clean site). Rejects with TargetUnreachableError (a `reason` to show)
 * when the start page gets no answer at all, and with a TypeError when `serviceUrl` is not an
 * http(s) URL without credentials.
 */
export async function runBaselineScan(serviceUrl: string, options: BaselineScanOptions): Promise<ZapReportDocument> {
  const start = targetUrl(serviceUrl);
  const report = new ZapReportBuilder(start, BASELINE_ENGINE);
  const summary = await crawl(
    start,
    {
      maxPages: options.maxPages ?? 100,
      maxDurationMs: options.maxDurationMs ?? 60_000,
      concurrency: options.concurrency ?? 4,
      policy: options.targetPolicy,
      requestHeaders: {
        "user-agent": options.userAgent ?? DEFAULT_USER_AGENT,
        accept: "text/html,application/xhtml+xml,*/*;q=0.8",
        origin: PROBE_ORIGIN,
      },
      requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
      maxBodyBytes: MAX_BODY_BYTES,
      signal: options.signal,
      tls: options.tls,
      resolveAll: options.resolveAll,
    },
    (response) => {
      for (const rule of PASSIVE_RULES) for (const hit of rule.check(response)) report.add(rule, response.url, hit);
    },
  );
  options.onSummary?.(summary);
  return report.document();
}

function targetUrl(serviceUrl: string): URL {
  let url: URL;
  try {
    url = new URL(serviceUrl);
  } catch {
    throw new TypeError(`The serviceUrl ${JSON.stringify(serviceUrl)} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new TypeError(`The serviceUrl ${url.href} is not an http(s) URL`);
  if (url.username || url.password)
    throw new TypeError("The serviceUrl must not carry credentials: the baseline scan does not authenticate");
  return url;
}
