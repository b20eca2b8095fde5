// The baseline engine's crawl (docs/spec/CONTRACT.md §12): GET requests only, breadth-first from the start URL
// over its origin (scheme, host and port), bounded by a number of requests, a duration and a
// number of requests at once. Every request goes through the target policy (literal hosts here,
// resolved addresses at connect time), redirects included, since a redirect is just the next request.
import { Agent } from "undici";
import { createGuardedLookup, type ResolveAll, type TargetPolicy } from "../../net/ssrf-guard.ts";
import { linksOf } from "./crawl-links.ts";
import { FetchFailure, fetchPage, type FetchContext } from "./fetch-page.ts";
import type { ObservedResponse } from "./observed-response.ts";
import { TargetUnreachableError } from "./target-unreachable.ts";

export interface CrawlOptions {
  /** Requests in all, the first page, robots.txt and sitemap.xml included. */
  maxPages: number;
  maxDurationMs: number;
  /** Requests at once. */
  concurrency: number;
  policy: TargetPolicy;
  requestHeaders: Readonly<Record<string, string>>;
  /** Longest one request may take, its answer's head and body together. */
  requestTimeoutMs: number;
  maxBodyBytes: number;
  /** The scan stopping: the crawl rejects with its reason. */
  signal?: AbortSignal;
  /** Extra trusted CAs (tests; in production NODE_EXTRA_CA_CERTS). */
  tls?: { ca?: string | Buffer };
  /** Name resolution (tests); dns.lookup by default. */
  resolveAll?: ResolveAll;
}

export interface CrawlSummary {
  requests: number;
  /** Requests that got no answer (after the first, which fails the crawl instead). */
  failures: number;
  /** Links seen that lead off the origin, not followed. */
  offOrigin: number;
  stoppedBy: "done" | "max-pages" | "max-duration";
}

/**
 * Crawls from `start`, handing each answer to `visit` as it arrives (nothing is kept). Throws
 * TargetUnreachableError when the first request gets no answer at all.
 */
export async function crawl(
  start: URL,
  options: CrawlOptions,
  visit: (response: ObservedResponse) => void,
): Promise<CrawlSummary> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new Error("DAST duration limit reached")), options.maxDurationMs);
  const signals = [deadline.signal, ...(options.signal ? [options.signal] : [])];
  const agent = new Agent({
    connections: options.concurrency,
    connect: { lookup: createGuardedLookup({ ...options.policy, resolveAll: options.resolveAll }), ...options.tls },
  });
  const context: FetchContext = {
    dispatcher: agent,
    policy: options.policy,
    requestHeaders: options.requestHeaders,
    signal: AbortSignal.any(signals),
    timeoutMs: Math.min(options.requestTimeoutMs, options.maxDurationMs),
    maxBodyBytes: options.maxBodyBytes,
  };
  const summary: CrawlSummary = { requests: 0, failures: 0, offOrigin: 0, stoppedBy: "done" };
  const seen = new Set<string>();
  const queue: URL[] = [];
  // requests + queue.length never exceeds maxPages: what could never be requested is not kept,
  // so pages of a hundred thousand links cost no memory beyond the limit.
  let leftOut = false;
  const enqueue = (url: URL) => {
    if (url.origin !== start.origin) summary.offOrigin++;
    else if (seen.has(url.href)) return;
    else if (summary.requests + queue.length >= options.maxPages) leftOut = true;
    else {
      seen.add(url.href);
      queue.push(url);
    }
  };

  /** One request's answer, or why it got none; the scan stopping rejects. */
  const answerTo = async (url: URL): Promise<ObservedResponse | FetchFailure> => {
    summary.requests++;
    try {
      return await fetchPage(url, context);
    } catch (err) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (deadline.signal.aborted)
        return new FetchFailure(
          "timeout",
          `${url.href} did not answer within the scan's ${options.maxDurationMs / 1000} s`,
        );
      if (err instanceof FetchFailure) return err;
      throw err;
    }
  };
  const take = (response: ObservedResponse) => {
    visit(response);
    linksOf(response).forEach(enqueue);
  };
  const step = async (url: URL): Promise<void> => {
    const answer = await answerTo(url);
    if (answer instanceof FetchFailure) summary.failures++;
    else take(answer);
  };

  try {
    const first = new URL(start);
    first.hash = "";
    seen.add(first.href);
    // No answer at all to the start page (refused, DNS, TLS, timeout, forbidden): nothing to scan.
    const answer = await answerTo(first);
    if (answer instanceof FetchFailure) throw new TargetUnreachableError(answer.kind, answer.message);
    for (const path of ["/robots.txt", "/sitemap.xml"]) enqueue(new URL(path, start));
    take(answer);

    const inFlight = new Set<Promise<void>>();
    for (;;) {
      while (
        inFlight.size < options.concurrency &&
        queue.length > 0 &&
        summary.requests < options.maxPages &&
        !deadline.signal.aborted
      ) {
        const running: Promise<void> = step(queue.shift()!).finally(() => inFlight.delete(running));
        running.catch(() => {}); // a rejection (the scan stopping) is seen by the race below; the others' are moot
        inFlight.add(running);
      }
      if (inFlight.size === 0) break;
      await Promise.race(inFlight);
    }
    if (deadline.signal.aborted) summary.stoppedBy = "max-duration";
    else if (leftOut) summary.stoppedBy = "max-pages";
    return summary;
  } finally {
    clearTimeout(timer);
    await agent.destroy();
  }
}
