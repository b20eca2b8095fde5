// One request of the crawl and its answer, as the passive rules see it (ZAP's HttpMessage): the
// request sent, the status, the headers, the body as text (cut at the body limit) and, for HTML,
// what its markup holds.
import type { HtmlFacts } from "./html-facts.ts";

export interface ObservedResponse {
  url: URL;
  method: "GET";
  /** Headers the crawl sent (lower-case names), e.g. its probing `origin`. */
  requestHeaders: Readonly<Record<string, string>>;
  status: number;
  headers: ResponseHeaders;
  /** The body decoded as its charset says (UTF-8 by default), at most the body limit of it. */
  body: string;
  /** The body went on beyond the limit and was not read further. */
  truncated: boolean;
  /** Parsed markup when the response is HTML, else null. */
  html: HtmlFacts | null;
}

/** Response headers by lower-case name, each with every value it was sent with, in order. */
export class ResponseHeaders {
  private readonly byName = new Map<string, string[]>();

  constructor(raw: Record<string, string | string[] | undefined> = {}) {
    for (const [name, value] of Object.entries(raw)) {
      if (value === undefined) continue;
      const values = Array.isArray(value) ? value : [value];
      this.byName.set(name.toLowerCase(), [...(this.byName.get(name.toLowerCase()) ?? []), ...values]);
    }
  }

  /** Every value of the header (a header sent twice has two). */
  all(name: string): string[] {
    return this.byName.get(name.toLowerCase()) ?? [];
  }

  /** The first value, or undefined. */
  get(name: string): string | undefined {
    return this.all(name)[0];
  }

  has(name: string): boolean {
    return this.all(name).length > 0;
  }
}

const mediaType = (r: ObservedResponse): string =>
  (r.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();

export const isHttps = (r: ObservedResponse): boolean => r.url.protocol === "https:";
export const isRedirect = (r: ObservedResponse): boolean => r.status >= 300 && r.status < 400;
export const isError = (r: ObservedResponse): boolean => r.status >= 400;

export const isHtml = (r: ObservedResponse): boolean => {
  const type = mediaType(r);
  return type === "text/html" || type === "application/xhtml+xml";
};

export const isJavaScript = (r: ObservedResponse): boolean => {
  const type = mediaType(r);
  return type.includes("javascript") || type.includes("ecmascript") || /\.m?js$/i.test(r.url.pathname);
};

/** Text a person or a program reads: text/*, JSON, XML and JavaScript (not images, archives, …). */
export const isText = (r: ObservedResponse): boolean => {
  const type = mediaType(r);
  return type.startsWith("text/") || /json|xml|javascript|ecmascript/.test(type);
};
