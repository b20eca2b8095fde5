// Where a response leads the crawl: an HTML page's links, form actions, script and stylesheet
// sources and frames; a redirect's Location; robots.txt's paths and sitemaps; a sitemap's <loc>s.
// Only URLs are returned here; the crawl keeps those of its origin.
import { Parser } from "htmlparser2";
import type { HtmlFacts } from "./html-facts.ts";
import { httpUrlOf } from "./http-url.ts";
import { isRedirect, type ObservedResponse } from "./observed-response.ts";

/** Elements and the attribute whose URL the browser would fetch (or submit to) on the user's behalf. */
const URL_ATTRIBUTE: Readonly<Record<string, string>> = {
  a: "href",
  area: "href",
  form: "action",
  script: "src",
  iframe: "src",
  frame: "src",
};

export function linksOf(response: ObservedResponse): URL[] {
  const candidates: string[] = [];
  if (isRedirect(response)) candidates.push(response.headers.get("location") ?? "");
  if (response.html) candidates.push(...htmlLinks(response.html));
  if (response.status === 200 && response.url.pathname === "/robots.txt")
    candidates.push(...robotsTxtEntries(response.body));
  if (response.status === 200 && isSitemap(response.body)) candidates.push(...sitemapLocations(response.body));
  const base = baseOf(response);
  return candidates.flatMap((candidate) => {
    const url = httpUrlOf(candidate, base);
    return url ? [url] : [];
  });
}

function htmlLinks(facts: HtmlFacts): string[] {
  return facts.elements.flatMap((e) => {
    if (e.name === "link")
      return /\bstylesheet\b/i.test(e.attribs["rel"] ?? "") && e.attribs["href"] ? [e.attribs["href"]] : [];
    const attribute = URL_ATTRIBUTE[e.name];
    const value = attribute && e.attribs[attribute];
    // A form without an action submits to its own page, which is already known.
    return value ? [value] : [];
  });
}

/** The page's <base href> when it has one (resolved against the page), else the page. */
function baseOf(response: ObservedResponse): URL {
  const href = response.html?.elements.find((e) => e.name === "base" && e.attribs["href"])?.attribs["href"];
  return (href && httpUrlOf(href, response.url)) || response.url;
}

/**
 * The paths of `Allow` and `Disallow` lines (the pages a site names are worth a look, whichever way)
 * and `Sitemap` URLs. Patterns with `*` or `$` are not URLs and are skipped.
 */
export function robotsTxtEntries(text: string): string[] {
  return text.split(/\r?\n/).flatMap((line) => {
    const match = /^\s*(allow|disallow|sitemap)\s*:\s*(\S+)/i.exec(line.replace(/#.*$/, ""));
    if (!match) return [];
    const value = match[2]!;
    return match[1]!.toLowerCase() !== "sitemap" && /[*$]/.test(value) ? [] : [value];
  });
}

const isSitemap = (body: string): boolean => /<(urlset|sitemapindex)[\s>]/.test(body.slice(0, 4096));

/** The <loc> URLs of a sitemap or a sitemap index (whose entries are sitemaps, read in turn when crawled). */
export function sitemapLocations(xml: string): string[] {
  const locations: string[] = [];
  let text: string | undefined;
  const parser = new Parser(
    {
      onopentag(name) {
        if (name === "loc") text = "";
      },
      ontext(chunk) {
        if (text !== undefined) text += chunk;
      },
      onclosetag(name) {
        if (name !== "loc" || text === undefined) return;
        locations.push(text.trim());
        text = undefined;
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.end(xml);
  return locations;
}
