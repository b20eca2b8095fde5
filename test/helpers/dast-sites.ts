// The sites the DAST baseline tests scan: a careful one that sends every header a careful site
// sends (no rule may fire anywhere on it), one that plants each rule's defect on a page of its own
// (each rule must fire there and nowhere else), one of 10,000 linked pages, and pages that stream
// forever or redirect elsewhere.
import type http from "node:http";
import type { PassiveRule } from "../../src/scans/dast/passive-rule.ts";
import * as cookies from "../../src/scans/dast/rules/cookies.ts";
import * as crossDomain from "../../src/scans/dast/rules/cross-domain.ts";
import * as forms from "../../src/scans/dast/rules/forms-and-authentication.ts";
import * as disclosure from "../../src/scans/dast/rules/information-disclosure.ts";
import * as headers from "../../src/scans/dast/rules/security-headers.ts";
import type { SiteHandler, TargetSite } from "./target-site.ts";

/** What a careful site sends on every response. */
export const CAREFUL_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": "default-src 'self'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "strict-transport-security": "max-age=31536000; includeSubDomains",
  "permissions-policy": "camera=(), microphone=(), geolocation=()",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cache-control": "no-store",
};

const HTML = "text/html; charset=utf-8";
const CAREFUL_COOKIE = "sid=3f9c2a; Path=/; Secure; HttpOnly; SameSite=Lax";

export interface Page {
  status?: number;
  type?: string;
  body?: string;
  /** Headers on top of the careful ones; `null` leaves a careful header out. */
  headers?: Record<string, string | string[] | null>;
}

export function send(res: http.ServerResponse, page: Page): void {
  const headers: Record<string, string | string[]> = { ...CAREFUL_HEADERS, "content-type": page.type ?? HTML };
  for (const [name, value] of Object.entries(page.headers ?? {})) {
    if (value === null) delete headers[name];
    else headers[name] = value;
  }
  res.writeHead(page.status ?? 200, headers).end(page.body ?? "");
}

const html = (title: string, content = "") =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title><link rel="stylesheet" href="/style.css"></head><body><h1>${title}</h1>${content}</body></html>`;
const links = (paths: readonly string[]) => `<ul>${paths.map((p) => `<li><a href="${p}">${p}</a></li>`).join("")}</ul>`;
const robots = (page: string) => ({
  type: "text/plain",
  body: `User-agent: *\nDisallow: ${page}\nDisallow: /*.pdf$\n`,
});
const sitemap = (origin: string, page: string) => ({
  type: "application/xml",
  body: `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${origin}${page}</loc></url></urlset>`,
});

/** Pages both sites share: a stylesheet, a script, robots.txt and sitemap.xml leading to two pages linked from nowhere else. */
function commonPage(path: string, site: TargetSite): Page | undefined {
  switch (path) {
    case "/style.css":
      return { type: "text/css; charset=utf-8", body: "body { font-family: sans-serif; }" };
    case "/app.js":
      return { type: "text/javascript; charset=utf-8", body: "document.documentElement.dataset.ready = 'yes';" };
    case "/robots.txt":
      return robots("/from-robots");
    case "/sitemap.xml":
      return sitemap(site.origin, "/from-sitemap");
    case "/from-robots":
      return { body: html("Listed in robots.txt") };
    case "/from-sitemap":
      return { body: html("Listed in sitemap.xml") };
    default:
      return undefined;
  }
}

const CLEAN_PAGES: Readonly<Record<string, (site: TargetSite) => Page>> = {
  "/": () => ({
    headers: { "set-cookie": CAREFUL_COOKIE },
    body: html(
      "A careful site",
      links(["/about", "/login", "/search", "/api/status", "/logout", "/moved", "/missing"]) +
        // A third-party script pinned by Subresource Integrity, and a public address in the text.
        `<script src="https://cdn.example.com/lib.js" integrity="sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC" crossorigin="anonymous"></script>` +
        `<script src="/app.js"></script><p>Mirror at 203.0.113.5, release 10.0.0.1.2 of the docs.</p>`,
    ),
  }),
  "/about": () => ({ body: html("About", `<img src="/logo.png" alt="logo"><a href="/">home</a>`) }),
  "/login": () => ({
    body: html(
      "Sign in",
      `<form method="post" action="/session"><input type="hidden" name="_csrf" value="a1b2"><input name="user"><input type="password" name="password"><button>Sign in</button></form>`,
    ),
  }),
  "/search": () => ({ body: html("Search", `<form action="/search"><input name="q"></form>`) }),
  "/session": () => ({ body: html("Signed in") }),
  "/api/status": () => ({ type: "application/json", body: JSON.stringify({ ok: true, version: "1.4.2" }) }),
  "/logout": () => ({ headers: { "set-cookie": "sid=; Path=/; Max-Age=0" }, body: html("Signed out") }),
  "/moved": () => ({ status: 301, headers: { location: "/about" }, body: "" }),
};

/** Every header a careful site sends, on every answer; forms carry their token, cookies every attribute. */
export const cleanSite: SiteHandler = (req, res, site) => {
  const path = new URL(req.url ?? "/", "http://x").pathname;
  const page = CLEAN_PAGES[path]?.(site) ?? commonPage(path, site) ?? { status: 404, body: html("Not found") };
  send(res, page);
};

export interface Defect {
  path: string;
  /** The rule (one ZAP alert) the page must raise, and nothing else. */
  rule: PassiveRule;
  /** The rule only applies over this scheme (on the other, the page must raise nothing). */
  only?: "http" | "https";
  page: (req: http.IncomingMessage) => Page;
}

const NO_FRAME_ANCESTORS = "default-src 'self'";
const cookiePage = (cookie: string): Page => ({ headers: { "set-cookie": cookie }, body: html("Cookie") });

/** One page per rule, each the careful page with one defect planted. */
export const DEFECTS: readonly Defect[] = [
  {
    path: "/no-csp",
    rule: headers.cspHeaderNotSet,
    page: () => ({ headers: { "content-security-policy": null }, body: html("No CSP") }),
  },
  {
    path: "/no-xfo",
    rule: headers.antiClickjackingMissing,
    page: () => ({
      headers: { "content-security-policy": NO_FRAME_ANCESTORS, "x-frame-options": null },
      body: html("Frameable"),
    }),
  },
  {
    path: "/bad-xfo",
    rule: headers.xFrameOptionsMalformed,
    page: () => ({
      headers: { "content-security-policy": NO_FRAME_ANCESTORS, "x-frame-options": "ALLOW-FROM https://example.com" },
      body: html("Bad XFO"),
    }),
  },
  {
    path: "/no-nosniff",
    rule: headers.xContentTypeOptionsMissing,
    page: () => ({ headers: { "x-content-type-options": null }, body: html("Sniffable") }),
  },
  {
    path: "/no-hsts",
    rule: headers.hstsNotSet,
    only: "https",
    page: () => ({ headers: { "strict-transport-security": null }, body: html("No HSTS") }),
  },
  {
    path: "/hsts-off",
    rule: headers.hstsDisabled,
    only: "https",
    page: () => ({ headers: { "strict-transport-security": "max-age=0" }, body: html("HSTS off") }),
  },
  {
    path: "/no-permissions-policy",
    rule: headers.permissionsPolicyNotSet,
    page: () => ({ headers: { "permissions-policy": null }, body: html("No Permissions-Policy") }),
  },
  {
    path: "/feature-policy",
    rule: headers.featurePolicyDeprecated,
    page: () => ({
      headers: { "permissions-policy": null, "feature-policy": "camera 'none'" },
      body: html("Feature-Policy"),
    }),
  },
  {
    path: "/cookie-no-httponly",
    rule: cookies.cookieWithoutHttpOnly,
    page: () => cookiePage("theme=dark; Path=/; Secure; SameSite=Lax"),
  },
  {
    path: "/cookie-no-secure",
    rule: cookies.cookieWithoutSecure,
    only: "https",
    page: () => cookiePage("cart=7; Path=/; HttpOnly; SameSite=Lax"),
  },
  {
    path: "/cookie-no-samesite",
    rule: cookies.cookieWithoutSameSite,
    page: () => cookiePage("pref=1; Path=/; Secure; HttpOnly"),
  },
  {
    path: "/cookie-samesite-none",
    rule: cookies.cookieSameSiteNone,
    page: () => cookiePage("track=1; Path=/; Secure; HttpOnly; SameSite=None"),
  },
  {
    path: "/cookie-samesite-bogus",
    rule: cookies.cookieSameSiteInvalid,
    page: () => cookiePage("lang=en; Path=/; Secure; HttpOnly; SameSite=Sometimes"),
  },
  {
    path: "/server-version",
    rule: disclosure.serverVersionLeak,
    page: () => ({ headers: { server: "nginx/1.25.3" }, body: html("Server") }),
  },
  {
    path: "/powered-by",
    rule: disclosure.xPoweredByLeak,
    page: () => ({ headers: { "x-powered-by": "Express" }, body: html("Powered by") }),
  },
  {
    path: "/cors-star",
    rule: crossDomain.crossDomainMisconfiguration,
    page: () => ({ type: "application/json", headers: { "access-control-allow-origin": "*" }, body: "{}" }),
  },
  {
    path: "/cors-echo",
    rule: crossDomain.crossDomainMisconfiguration,
    page: (req) => ({
      type: "application/json",
      headers: {
        "access-control-allow-origin": req.headers.origin ?? "https://app.example.com",
        "access-control-allow-credentials": "true",
        vary: "Origin",
      },
      body: "{}",
    }),
  },
  {
    path: "/cdn-script",
    rule: crossDomain.crossDomainScriptInclusion,
    page: () => ({ body: html("CDN", `<script src="https://cdn.example.com/widget.js"></script>`) }),
  },
  {
    path: "/mixed",
    rule: crossDomain.mixedContent,
    only: "https",
    page: () => ({ body: html("Mixed", `<img src="http://images.example.com/banner.png" alt="banner">`) }),
  },
  {
    path: "/mixed-script",
    rule: crossDomain.mixedContentWithScripts,
    only: "https",
    page: () => ({
      body: html(
        "Mixed script",
        `<script src="http://cdn.example.com/old.js" integrity="sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC"></script>`,
      ),
    }),
  },
  {
    path: "/debug-error",
    rule: disclosure.debugErrorMessages,
    page: () => ({
      status: 500,
      body: html(
        "Error",
        `<pre>Traceback (most recent call last):\n  File "app.py", line 12, in handler\nKeyError: 'id'</pre>`,
      ),
    }),
  },
  {
    path: "/files/",
    rule: disclosure.directoryBrowsing,
    page: () => ({
      body: `<html><head><title>Index of /files/</title></head><body><h1>Index of /files/</h1><pre><a href="backup.tar.gz">backup.tar.gz</a></pre></body></html>`,
    }),
  },
  {
    path: "/account/edit",
    rule: forms.absenceOfAntiCsrfTokens,
    page: () => ({
      body: html(
        "Edit account",
        `<form method="POST" action="/account"><input name="email"><button>Save</button></form>`,
      ),
    }),
  },
  {
    path: "/admin",
    rule: forms.weakAuthenticationMethod,
    only: "http",
    page: () => ({ status: 401, headers: { "www-authenticate": 'Basic realm="admin"' }, body: html("Sign in") }),
  },
  {
    path: "/internal",
    rule: disclosure.privateIpDisclosure,
    page: () => ({ body: html("Status", `<p>Served by upstream 10.12.0.7:8080</p>`) }),
  },
];

const DEFECT_BY_PATH = new Map(DEFECTS.map((d) => [d.path, d]));

/** A careful front page linking to one page per planted defect. */
export const plantedSite: SiteHandler = (req, res, site) => {
  const path = new URL(req.url ?? "/", "http://x").pathname;
  const defect = DEFECT_BY_PATH.get(path);
  if (defect) return send(res, defect.page(req));
  if (path === "/") return send(res, { body: html("Every defect", links(DEFECTS.map((d) => d.path))) });
  send(res, commonPage(path, site) ?? { status: 404, body: html("Not found") });
};

/** The alerts a scan of the planted site must raise over `scheme`: alert name → the paths where. */
export function plantedAlerts(scheme: "http" | "https"): Record<string, string[]> {
  const expected: Record<string, string[]> = {};
  for (const defect of DEFECTS) {
    if (defect.only && defect.only !== scheme) continue;
    (expected[defect.rule.name] ??= []).push(defect.path);
  }
  for (const paths of Object.values(expected)) paths.sort();
  return expected;
}

/** 10,000 careful pages, each linking to the next two (a binary tree from /page/1). */
export const PAGES_IN_BIG_SITE = 10_000;
export const bigSite: SiteHandler = (req, res) => {
  const n = req.url === "/" ? 0 : Number(/^\/page\/(\d+)$/.exec(req.url ?? "")?.[1] ?? NaN);
  if (!(n >= 0 && n <= PAGES_IN_BIG_SITE)) return send(res, { status: 404, body: html("Not found") });
  const next = [2 * n + 1, 2 * n + 2].filter((m) => m <= PAGES_IN_BIG_SITE).map((m) => `/page/${m}`);
  send(res, { body: html(`Page ${n}`, links(next)) });
};
