// Where a response leads the baseline crawl: links, form actions, scripts and stylesheets (not
// images), a redirect's Location, robots.txt's paths and sitemaps, a sitemap's <loc>s.
import { linksOf, robotsTxtEntries, sitemapLocations } from "../../../src/scans/dast/crawl-links.ts";
import { readHtml } from "../../../src/scans/dast/html-facts.ts";
import { ResponseHeaders, type ObservedResponse } from "../../../src/scans/dast/observed-response.ts";

function response(
  url: string,
  body: string,
  type = "text/html",
  status = 200,
  headers: Record<string, string> = {},
): ObservedResponse {
  return {
    url: new URL(url),
    method: "GET",
    requestHeaders: {},
    status,
    headers: new ResponseHeaders({ "content-type": type, ...headers }),
    body,
    truncated: false,
    html: type === "text/html" ? readHtml(body) : null,
  };
}
const hrefs = (r: ObservedResponse) => linksOf(r).map((u) => u.href);

describe("linksOf", () => {
  it("follows what a browser would fetch or submit to, resolved, without fragments", () => {
    const body = `
      <a href="/a#top">a</a> <a href="b?x=1&amp;y=2">b</a> <area href="https://other.example/c">
      <form action="/submit" method="post"></form> <form></form>
      <script src="/app.js"></script> <script>location = "/not-a-link"</script>
      <link rel="stylesheet" href="/style.css"> <link rel="icon" href="/favicon.ico">
      <iframe src="/frame"></iframe> <img src="/logo.png">
      <a href="mailto:x@example.com">mail</a> <a href="javascript:void 0">js</a> <a href="">self</a>`;
    expect(hrefs(response("https://app.example.com/dir/page", body))).toEqual([
      "https://app.example.com/a",
      "https://app.example.com/dir/b?x=1&y=2",
      "https://other.example/c",
      "https://app.example.com/submit",
      "https://app.example.com/app.js",
      "https://app.example.com/style.css",
      "https://app.example.com/frame",
    ]);
  });

  it("resolves against <base href>", () => {
    expect(hrefs(response("https://app.example.com/x/y", `<base href="/docs/"><a href="guide">g</a>`))).toEqual([
      "https://app.example.com/docs/guide",
    ]);
  });

  it("follows a redirect's Location", () => {
    expect(hrefs(response("https://app.example.com/old", "", "text/plain", 301, { location: "/new" }))).toEqual([
      "https://app.example.com/new",
    ]);
  });

  it("reads robots.txt and sitemaps", () => {
    expect(
      hrefs(
        response(
          "https://app.example.com/robots.txt",
          "Disallow: /private\nSitemap: https://app.example.com/s.xml",
          "text/plain",
        ),
      ),
    ).toEqual(["https://app.example.com/private", "https://app.example.com/s.xml"]);
    const xml = `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://app.example.com/p?a=1&amp;b=2</loc></url></urlset>`;
    expect(hrefs(response("https://app.example.com/s.xml", xml, "application/xml"))).toEqual([
      "https://app.example.com/p?a=1&b=2",
    ]);
  });
});

describe("robotsTxtEntries", () => {
  it("takes Allow and Disallow paths and Sitemap URLs, skipping patterns and comments", () => {
    const text =
      "User-agent: *\nDisallow: /admin # staff\nallow:/public\nDisallow: /*.pdf$\nDisallow:\nSitemap: https://a.example/sitemap.xml\nCrawl-delay: 5\n";
    expect(robotsTxtEntries(text)).toEqual(["/admin", "/public", "https://a.example/sitemap.xml"]);
  });
});

describe("sitemapLocations", () => {
  it("reads a sitemap index's sitemaps and a sitemap's pages", () => {
    expect(
      sitemapLocations(`<sitemapindex><sitemap><loc> https://a.example/one.xml </loc></sitemap></sitemapindex>`),
    ).toEqual(["https://a.example/one.xml"]);
    expect(
      sitemapLocations(
        `<urlset><url><loc>https://a.example/</loc><lastmod>2026-01-01</lastmod></url><url><loc>https://a.example/b</loc></url></urlset>`,
      ),
    ).toEqual(["https://a.example/", "https://a.example/b"]);
  });
});
