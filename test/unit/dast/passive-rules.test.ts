// Each passive rule of the baseline engine: when it fires (with what) and, as carefully, when it
// must not (ZAP's false-positive guards). The rules table of docs/users/scans-and-agents.md is checked against the table.
import { readFileSync } from "node:fs";
import { readHtml } from "../../../src/scans/dast/html-facts.ts";
import { ResponseHeaders, type ObservedResponse } from "../../../src/scans/dast/observed-response.ts";
import type { PassiveRule, RuleHit } from "../../../src/scans/dast/passive-rule.ts";
import { PASSIVE_RULES } from "../../../src/scans/dast/passive-rules.ts";
import * as cookies from "../../../src/scans/dast/rules/cookies.ts";
import * as crossDomain from "../../../src/scans/dast/rules/cross-domain.ts";
import * as forms from "../../../src/scans/dast/rules/forms-and-authentication.ts";
import * as disclosure from "../../../src/scans/dast/rules/information-disclosure.ts";
import * as headers from "../../../src/scans/dast/rules/security-headers.ts";

interface Spec {
  url?: string;
  status?: number;
  type?: string;
  headers?: Record<string, string | string[]>;
  body?: string;
  requestHeaders?: Record<string, string>;
}

/** A response as the crawl hands it to the rules (HTML parsed when it is HTML). */
function observed(spec: Spec): ObservedResponse {
  const type = spec.type ?? "text/html; charset=utf-8";
  const response: ObservedResponse = {
    url: new URL(spec.url ?? "https://app.example.com/page"),
    method: "GET",
    requestHeaders: spec.requestHeaders ?? {},
    status: spec.status ?? 200,
    headers: new ResponseHeaders({ "content-type": type, ...spec.headers }),
    body: spec.body ?? "<!doctype html><p>hello</p>",
    truncated: false,
    html: null,
  };
  if (/html/.test(type)) response.html = readHtml(response.body);
  return response;
}

const page = (body: string, spec: Spec = {}) =>
  observed({ ...spec, body: `<!doctype html><html><head></head><body>${body}</body></html>` });
const http = "http://app.example.com/page";

type Case = [string, Spec | ObservedResponse, RuleHit[]?];
const toResponse = (c: Spec | ObservedResponse) => ("method" in c ? c : observed(c));

const RULE_CASES: Array<{ rule: PassiveRule; fires: Case[]; silent: Case[] }> = [
  {
    rule: headers.cspHeaderNotSet,
    fires: [
      ["an HTML page without CSP", {}, [{}]],
      ["an HTML error page without CSP", { status: 404 }, [{}]],
    ],
    silent: [
      ["a Content-Security-Policy header", { headers: { "content-security-policy": "default-src 'self'" } }],
      [
        "a CSP in a <meta http-equiv>",
        page(`<meta http-equiv="Content-Security-Policy" content="default-src 'self'">`),
      ],
      ["a redirect", { status: 302, headers: { location: "/x" } }],
      ["JSON", { type: "application/json", body: "{}" }],
    ],
  },
  {
    rule: headers.antiClickjackingMissing,
    fires: [
      [
        "a page without X-Frame-Options or frame-ancestors",
        { headers: { "content-security-policy": "default-src 'self'" } },
        [{ param: "x-frame-options" }],
      ],
    ],
    silent: [
      ["X-Frame-Options: DENY", { headers: { "x-frame-options": "DENY" } }],
      ["CSP frame-ancestors", { headers: { "content-security-policy": "default-src 'self'; frame-ancestors 'none'" } }],
      ["an error page", { status: 500 }],
      ["a redirect", { status: 301, headers: { location: "/" } }],
      ["an empty body", { body: "" }],
      ["a stylesheet", { type: "text/css", body: "p{}" }],
    ],
  },
  {
    rule: headers.xFrameOptionsMalformed,
    fires: [
      [
        "X-Frame-Options: ALLOW-FROM",
        { headers: { "x-frame-options": "ALLOW-FROM https://a.example" } },
        [{ param: "x-frame-options", evidence: "ALLOW-FROM https://a.example" }],
      ],
    ],
    silent: [
      ["DENY", { headers: { "x-frame-options": "DENY" } }],
      ["sameorigin in lower case", { headers: { "x-frame-options": "sameorigin" } }],
      [
        "a bad value beside CSP frame-ancestors",
        { headers: { "x-frame-options": "ALLOWALL", "content-security-policy": "frame-ancestors 'self'" } },
      ],
      ["no header (10020-1's case)", {}],
    ],
  },
  {
    rule: headers.xContentTypeOptionsMissing,
    fires: [
      ["a script without it", { type: "text/javascript", body: "1" }, [{ param: "x-content-type-options" }]],
      [
        "a value other than nosniff",
        { headers: { "x-content-type-options": "sniff" } },
        [{ param: "x-content-type-options", evidence: "sniff" }],
      ],
    ],
    silent: [
      ["nosniff", { headers: { "x-content-type-options": "nosniff" } }],
      ["a 404", { status: 404 }],
      ["a redirect", { status: 302, headers: { location: "/" } }],
      ["an empty body", { body: "" }],
    ],
  },
  {
    rule: headers.hstsNotSet,
    fires: [
      ["an https page without it", {}, [{}]],
      ["an https redirect to http", { status: 301, headers: { location: "http://app.example.com/" } }, [{}]],
    ],
    silent: [
      ["an http page", { url: http }],
      ["an https page with it", { headers: { "strict-transport-security": "max-age=31536000" } }],
      ["a relative redirect on https", { status: 302, headers: { location: "/login" } }],
      ["a redirect to https on the same host", { status: 302, headers: { location: "https://app.example.com/login" } }],
    ],
  },
  {
    rule: headers.hstsDisabled,
    fires: [
      [
        "max-age=0",
        { headers: { "strict-transport-security": "max-age=0; includeSubDomains" } },
        [{ evidence: "max-age=0; includeSubDomains" }],
      ],
    ],
    silent: [
      ["a year", { headers: { "strict-transport-security": "max-age=31536000" } }],
      ["max-age=0123 (123 seconds)", { headers: { "strict-transport-security": "max-age=0123" } }],
      ["max-age=0 over http", { url: http, headers: { "strict-transport-security": "max-age=0" } }],
    ],
  },
  {
    rule: headers.permissionsPolicyNotSet,
    fires: [
      ["an HTML page without it", {}, [{}]],
      ["a script without it", { type: "application/javascript", body: "1" }, [{}]],
    ],
    silent: [
      ["Permissions-Policy", { headers: { "permissions-policy": "camera=()" } }],
      ["Feature-Policy (10063-2's case)", { headers: { "feature-policy": "camera 'none'" } }],
      ["a stylesheet", { type: "text/css", body: "p{}" }],
      ["a redirect", { status: 302, headers: { location: "/" } }],
    ],
  },
  {
    rule: headers.featurePolicyDeprecated,
    fires: [["Feature-Policy", { headers: { "feature-policy": "camera 'none'" } }, [{ evidence: "feature-policy" }]]],
    silent: [["Permissions-Policy", { headers: { "permissions-policy": "camera=()" } }]],
  },
  {
    rule: cookies.cookieWithoutHttpOnly,
    fires: [
      [
        "one cookie of two without HttpOnly",
        { headers: { "set-cookie": ["a=1; HttpOnly", "b=2; Secure"] } },
        [{ param: "b", evidence: "set-cookie: b" }],
      ],
    ],
    silent: [
      ["HttpOnly in any case", { headers: { "set-cookie": "a=1; httponly" } }],
      ["a deletion by Max-Age=0", { headers: { "set-cookie": "a=; Max-Age=0" } }],
      ["a deletion by a past Expires", { headers: { "set-cookie": "a=; Expires=Thu, 01 Jan 1970 00:00:00 GMT" } }],
    ],
  },
  {
    rule: cookies.cookieWithoutSecure,
    fires: [
      [
        "an https cookie without Secure",
        { headers: { "set-cookie": "a=1; HttpOnly" } },
        [{ param: "a", evidence: "set-cookie: a" }],
      ],
    ],
    silent: [
      ["over http", { url: http, headers: { "set-cookie": "a=1" } }],
      ["Secure", { headers: { "set-cookie": "a=1; Secure" } }],
      ["a deletion", { headers: { "set-cookie": "a=; Max-Age=-1" } }],
    ],
  },
  {
    rule: cookies.cookieWithoutSameSite,
    fires: [
      [
        "no SameSite",
        { headers: { "set-cookie": "a=1; Secure; HttpOnly" } },
        [{ param: "a", evidence: "set-cookie: a" }],
      ],
    ],
    silent: [
      ["Lax", { headers: { "set-cookie": "a=1; SameSite=Lax" } }],
      ["Strict", { headers: { "set-cookie": "a=1; samesite=strict" } }],
      ["None (10054-2's case)", { headers: { "set-cookie": "a=1; SameSite=None; Secure" } }],
      ["a deletion", { headers: { "set-cookie": "a=; Max-Age=0" } }],
    ],
  },
  {
    rule: cookies.cookieSameSiteNone,
    fires: [
      [
        "SameSite=None",
        { headers: { "set-cookie": "a=1; SameSite=None; Secure" } },
        [{ param: "a", evidence: "set-cookie: a" }],
      ],
    ],
    silent: [["SameSite=Lax", { headers: { "set-cookie": "a=1; SameSite=Lax" } }]],
  },
  {
    rule: cookies.cookieSameSiteInvalid,
    fires: [
      [
        "an unknown value",
        { headers: { "set-cookie": "a=1; SameSite=Sometimes" } },
        [{ param: "a", evidence: "set-cookie: a" }],
      ],
      [
        "the bare attribute",
        { headers: { "set-cookie": "b=1; SameSite" } },
        [{ param: "b", evidence: "set-cookie: b" }],
      ],
    ],
    silent: [
      ["Strict", { headers: { "set-cookie": "a=1; SameSite=Strict" } }],
      ["no SameSite (10054-1's case)", { headers: { "set-cookie": "a=1" } }],
    ],
  },
  {
    rule: disclosure.serverVersionLeak,
    fires: [
      ["a version in Server", { headers: { server: "Apache/2.4.1 (Unix)" } }, [{ evidence: "Apache/2.4.1 (Unix)" }]],
    ],
    silent: [
      ["a product without a version", { headers: { server: "nginx" } }],
      ["no Server header", {}],
    ],
  },
  {
    rule: disclosure.xPoweredByLeak,
    fires: [
      [
        "X-Powered-By",
        { headers: { "x-powered-by": ["PHP/8.2.1", "ASP.NET"] } },
        [{ evidence: "x-powered-by: PHP/8.2.1", otherInfo: "Other X-Powered-By values: ASP.NET" }],
      ],
    ],
    silent: [["no X-Powered-By", {}]],
  },
  {
    rule: crossDomain.crossDomainMisconfiguration,
    fires: [
      [
        "Access-Control-Allow-Origin: *",
        { headers: { "access-control-allow-origin": "*" } },
        [{ evidence: "access-control-allow-origin: *" }],
      ],
      [
        "the request's Origin echoed with credentials",
        {
          requestHeaders: { origin: "https://probe.invalid" },
          headers: {
            "access-control-allow-origin": "https://probe.invalid",
            "access-control-allow-credentials": "true",
          },
        },
        [
          {
            evidence: "access-control-allow-origin: https://probe.invalid",
            otherInfo: "The server echoed the foreign Origin the scan sent and allows credentials.",
          },
        ],
      ],
    ],
    silent: [
      [
        "an echoed Origin without credentials",
        {
          requestHeaders: { origin: "https://probe.invalid" },
          headers: { "access-control-allow-origin": "https://probe.invalid" },
        },
      ],
      [
        "one trusted origin with credentials",
        {
          requestHeaders: { origin: "https://probe.invalid" },
          headers: {
            "access-control-allow-origin": "https://app.example.com",
            "access-control-allow-credentials": "true",
          },
        },
      ],
      ["no CORS headers", {}],
    ],
  },
  {
    rule: crossDomain.crossDomainScriptInclusion,
    fires: [
      [
        "a script from another host",
        page(`<script src="https://cdn.example.net/a.js"></script>`),
        [{ param: "https://cdn.example.net/a.js", evidence: `<script src="https://cdn.example.net/a.js">` }],
      ],
      [
        "a protocol-relative one",
        page(`<script src="//cdn.example.net/b.js" integrity=" "></script>`),
        [{ param: "//cdn.example.net/b.js", evidence: `<script src="//cdn.example.net/b.js" integrity=" ">` }],
      ],
    ],
    silent: [
      ["the same host, absolute", page(`<script src="https://app.example.com/a.js"></script>`)],
      ["a relative path", page(`<script src="js/a.js"></script><script src="/b.js"></script>`)],
      ["a pinned script", page(`<script src="https://cdn.example.net/a.js" integrity="sha384-abc"></script>`)],
      [
        "an inline script mentioning a src",
        page(`<script>var s = '<script src="https://evil.example/x.js">';</script>`),
      ],
    ],
  },
  {
    rule: crossDomain.mixedContent,
    fires: [
      [
        "an https page with an http image and form",
        page(`<img src="http://img.example.com/a.png"><form action="HTTP://app.example.com/post"></form>`),
        [
          {
            evidence: "http://img.example.com/a.png",
            otherInfo: "tag=img src=http://img.example.com/a.png\ntag=form action=HTTP://app.example.com/post",
          },
        ],
      ],
    ],
    silent: [
      ["an http page", page(`<img src="http://img.example.com/a.png">`, { url: http })],
      [
        "https resources",
        page(`<img src="https://img.example.com/a.png"><a href="http://other.example.com/">a link is not loaded</a>`),
      ],
      ["an http script (the scripts variant's case)", page(`<script src="http://cdn.example.com/a.js"></script>`)],
    ],
  },
  {
    rule: crossDomain.mixedContentWithScripts,
    fires: [
      [
        "an http script",
        page(`<script src="http://cdn.example.com/a.js"></script>`),
        [{ evidence: "http://cdn.example.com/a.js", otherInfo: "tag=script src=http://cdn.example.com/a.js" }],
      ],
    ],
    silent: [["an http image only", page(`<img src="http://img.example.com/a.png">`)]],
  },
  {
    rule: disclosure.debugErrorMessages,
    fires: [
      ["a PHP warning", page(`<b>PHP Warning</b>: include(x.php): failed`), [{ evidence: "PHP Warning" }]],
      [
        "a Python traceback in text",
        { type: "text/plain", body: "traceback (most recent call last):" },
        [{ evidence: "traceback (most recent call last)" }],
      ],
    ],
    silent: [
      ["a script that contains the text", { type: "application/javascript", body: "log('PHP Warning')" }],
      ["an ordinary page", page("<p>All is well</p>")],
      ["an image", { type: "image/png", body: "PHP Warning" }],
    ],
  },
  {
    rule: disclosure.directoryBrowsing,
    fires: [
      [
        "Apache's listing",
        page("<title>Index of /backup</title>"),
        [
          {
            evidence: "<title>Index of /backup</title>",
            otherInfo: "The listing looks like that of Apache httpd or nginx (autoindex).",
          },
        ],
      ],
      [
        "IIS's listing",
        page(`<pre><A HREF="/">[To Parent Directory]</A><br><br>`),
        [
          {
            evidence: `<pre><A HREF="/">[To Parent Directory]</A>`,
            otherInfo: "The listing looks like that of Microsoft IIS.",
          },
        ],
      ],
    ],
    silent: [["a page about indexes", page("<title>Index of products</title><p>Index of /docs</p>")]],
  },
  {
    rule: forms.absenceOfAntiCsrfTokens,
    fires: [
      [
        "a POST form without a token",
        page(`<form method="post" action="/save"><input name="email"><input id="name"></form>`),
        [
          {
            evidence: `<form method="post" action="/save">`,
            otherInfo: `No known anti-CSRF token was found in form 1 (fields: "email" "name").`,
          },
        ],
      ],
    ],
    silent: [
      ["a GET form", page(`<form action="/search"><input name="q"></form>`)],
      ["an unknown method (submitted as GET)", page(`<form method="put"><input name="q"></form>`)],
      ["a dialog form", page(`<form method="dialog"><button>Close</button></form>`)],
      ["Django's token", page(`<form method="POST"><input type="hidden" name="csrfmiddlewaretoken" value="x"></form>`)],
      [
        "a token found by its id, in another case",
        page(`<form method="post"><input type="hidden" id="CSRF_TOKEN" value="x"></form>`),
      ],
    ],
  },
  {
    rule: forms.weakAuthenticationMethod,
    fires: [
      [
        "Basic over http",
        { url: http, status: 401, headers: { "www-authenticate": 'Basic realm="admin"' } },
        [{ evidence: 'www-authenticate: Basic realm="admin"' }],
      ],
      [
        "Digest over http",
        { url: http, status: 401, headers: { "www-authenticate": 'Digest realm="x", nonce="y"' } },
        [{ evidence: 'www-authenticate: Digest realm="x", nonce="y"' }],
      ],
    ],
    silent: [
      ["Basic over https", { status: 401, headers: { "www-authenticate": 'Basic realm="admin"' } }],
      ["Bearer over http", { url: http, status: 401, headers: { "www-authenticate": 'Bearer realm="api"' } }],
    ],
  },
  {
    rule: disclosure.privateIpDisclosure,
    fires: [
      [
        "private addresses and an EC2 host name",
        page("<p>db at 10.0.0.12, cache 192.168.1.20:6379, also 10.0.0.12 and ip-172-16-5-4.ec2.internal</p>"),
        [{ evidence: "10.0.0.12", otherInfo: "10.0.0.12\n192.168.1.20:6379\nip-172-16-5-4" }],
      ],
      [
        "in JSON",
        { type: "application/json", body: '{"upstream":"172.31.255.1"}' },
        [{ evidence: "172.31.255.1", otherInfo: "172.31.255.1" }],
      ],
    ],
    silent: [
      [
        "public and documentation addresses, versions and out-of-range octets",
        page("<p>8.8.8.8 172.32.0.1 203.0.113.5 v10.0.0.1.2 1.10.0.0.1 10.0.0.256</p>"),
      ],
      ["the scanned host's own address", page("<p>You reached 10.1.2.3</p>", { url: "http://10.1.2.3/" })],
      ["an image", { type: "image/png", body: "10.0.0.1" }],
    ],
  },
];

describe.each(RULE_CASES)("$rule.alertRef $rule.name", ({ rule, fires, silent }) => {
  it.each(fires)("fires on %s", (_label, spec, expected) => {
    expect(rule.check(toResponse(spec))).toEqual(expected);
  });
  it.each(silent)("stays silent on %s", (_label, spec) => {
    expect(rule.check(toResponse(spec))).toEqual([]);
  });
});

describe("the rules table", () => {
  it("has unit cases for every rule, and each rule is one ZAP alert (unique name)", () => {
    expect(new Set(RULE_CASES.map((c) => c.rule))).toEqual(new Set(PASSIVE_RULES));
    expect(new Set(PASSIVE_RULES.map((r) => r.name)).size).toBe(PASSIVE_RULES.length);
  });

  it("covers every rule docs/spec/CONTRACT.md §12 lists", () => {
    const ids = new Set(PASSIVE_RULES.map((r) => r.pluginId));
    for (const id of [
      10038, 10020, 10021, 10035, 10010, 10011, 10054, 10036, 10037, 10098, 10017, 10040, 10023, 10033, 10202, 10105, 2,
      10063,
    ])
      expect(ids).toContain(id);
  });

  it("is the rules table of docs/users/scans-and-agents.md, row for row", () => {
    const readme = readFileSync(new URL("../../../docs/users/scans-and-agents.md", import.meta.url), "utf8");
    const RISK = { 1: "Low", 2: "Medium", 3: "High" };
    const rows = readme
      .split("\n")
      .filter((line) => /^\| \d+ \| `?\d+(-\d+)?`? \|/.test(line))
      .map((line) =>
        line
          .split("|")
          .slice(1, 6)
          .map((cell) => cell.trim().replace(/`/g, "")),
      );
    expect(rows).toEqual(
      PASSIVE_RULES.map((r) => [String(r.pluginId), r.alertRef, r.name, RISK[r.risk], `CWE-${r.cweId}`]),
    );
  });
});
