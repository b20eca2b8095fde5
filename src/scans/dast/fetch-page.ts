// One GET of the crawl: the target policy checked first (IP literals never reach the guarded
// lookup), the answer's body read up to the limit and no further, decoded as its charset says.
// Redirects are not followed here: the crawl decides where to go next.
import { request, type Dispatcher } from "undici";
import { literalHostRefusal, type TargetPolicy } from "../../net/ssrf-guard.ts";
import { readHtml } from "./html-facts.ts";
import { isHtml, ResponseHeaders, type ObservedResponse } from "./observed-response.ts";

export interface FetchContext {
  dispatcher: Dispatcher;
  policy: TargetPolicy;
  requestHeaders: Readonly<Record<string, string>>;
  /** Aborts the request (the scan stopping, or its time running out). */
  signal: AbortSignal;
  /** Longest the request may take, its answer's head and body together. */
  timeoutMs: number;
  maxBodyBytes: number;
}

export type FetchFailureKind = "forbidden" | "dns" | "refused" | "timeout" | "tls" | "connection";

/** A request that got no answer, with a reason a person can act on. */
export class FetchFailure extends Error {
  constructor(
    readonly kind: FetchFailureKind,
    message: string,
  ) {
    super(message);
    this.name = "FetchFailure";
  }
}

export async function fetchPage(url: URL, ctx: FetchContext): Promise<ObservedResponse> {
  const refusal = literalHostRefusal(url, ctx.policy);
  if (refusal) throw new FetchFailure("forbidden", `Refusing to request ${url.origin}: its host ${refusal}`);
  const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(ctx.timeoutMs)]);
  let answer: Dispatcher.ResponseData;
  try {
    answer = await request(url, {
      method: "GET",
      headers: ctx.requestHeaders,
      dispatcher: ctx.dispatcher,
      signal,
      headersTimeout: ctx.timeoutMs,
      bodyTimeout: ctx.timeoutMs,
    });
  } catch (err) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    throw failureOf(err, url, ctx.timeoutMs);
  }
  const headers = new ResponseHeaders(answer.headers);
  const { bytes, truncated } = await readUpTo(answer.body, ctx.maxBodyBytes, ctx.signal);
  const response: ObservedResponse = {
    url,
    method: "GET",
    requestHeaders: ctx.requestHeaders,
    status: answer.statusCode,
    headers,
    body: decode(bytes, headers.get("content-type")),
    truncated,
    html: null,
  };
  if (isHtml(response)) response.html = readHtml(response.body);
  return response;
}

/**
 * The body's first `max` bytes. Past them the stream is destroyed, which closes the connection: a
 * page that never ends costs the limit, not the scan. A body that stalls or breaks midway keeps
 * what arrived (the answer's head and its start are still worth checking).
 */
async function readUpTo(
  body: Dispatcher.ResponseData["body"],
  max: number,
  scan: AbortSignal,
): Promise<{ bytes: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (size + chunk.length > max) {
        chunks.push(chunk.subarray(0, max - size));
        size = max;
        truncated = true;
        break;
      }
      chunks.push(chunk);
      size += chunk.length;
    }
  } catch (err) {
    if (scan.aborted) throw scan.reason;
    truncated = true;
  } finally {
    body.destroy();
  }
  return { bytes: Buffer.concat(chunks, size), truncated };
}

function decode(bytes: Buffer, contentType: string | undefined): string {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? "")?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8").decode(bytes);
  } catch {
    return new TextDecoder("utf-8").decode(bytes); // an unknown charset label
  }
}

const TLS_CODES = /^(CERT_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO_|ERR_TLS_|ERR_SSL_|EPROTO$)/;

/** Why a request got no answer, in words; undici wraps the socket's error as the cause. */
function failureOf(err: unknown, url: URL, timeoutMs: number): FetchFailure {
  // Duck-typed: errors from Node's internals may come from another realm (a VM context) than Error.
  const errors = [err, (err as { cause?: unknown })?.cause].filter(
    (e): e is NodeJS.ErrnoException => typeof e === "object" && e !== null && "message" in e,
  );
  // DOMException's code is a number; its name (TimeoutError, from AbortSignal.timeout) says more.
  const code = errors.map((e) => (typeof e.code === "string" ? e.code : e.name)).find((c) => c && c !== "Error") ?? "";
  const message = errors.map((e) => e.message).find(Boolean) ?? String(err);
  if (code === "ESSRF") return new FetchFailure("forbidden", message);
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "ENODATA")
    return new FetchFailure("dns", `${url.hostname} does not resolve (${code})`);
  if (code === "ECONNREFUSED") return new FetchFailure("refused", `${url.origin} refused the connection`);
  if (code === "TimeoutError" || code === "UND_ERR_CONNECT_TIMEOUT" || code === "UND_ERR_HEADERS_TIMEOUT") {
    return new FetchFailure("timeout", `${url.href} did not answer within ${timeoutMs / 1000} s`);
  }
  if (TLS_CODES.test(code)) return new FetchFailure("tls", `TLS with ${url.host} failed: ${message}`);
  return new FetchFailure(
    "connection",
    `${url.href}: ${message}${code && !message.includes(code) ? ` (${code})` : ""}`,
  );
}
