// How a page lets other origins in: CORS headers, scripts from other hosts, plain-http content on
// an https page.
import { startTag, type HtmlElement } from "../html-facts.ts";
import { httpUrlOf } from "../http-url.ts";
import { isHtml, isHttps, type ObservedResponse } from "../observed-response.ts";
import type { PassiveRule, RuleHit } from "../passive-rule.ts";

const none: RuleHit[] = [];
const ACAO = "access-control-allow-origin";

export const crossDomainMisconfiguration: PassiveRule = {
  pluginId: 10098,
  alertRef: "10098",
  name: "Cross-Domain Misconfiguration",
  risk: 2,
  confidence: 2,
  cweId: 264,
  wascId: 14,
  inspects:
    "every response: `Access-Control-Allow-Origin: *`, or the foreign `Origin` the crawl sends echoed back together with `Access-Control-Allow-Credentials: true`",
  description:
    "The response's CORS headers let pages of other sites read it: any site when Access-Control-Allow-Origin is *, and any site with the user's cookies when the server echoes whatever Origin it is sent and allows credentials.",
  solution:
    "Allow only the origins that need the data (an explicit list checked on the server), never echo the Origin header unchecked with credentials, and keep sensitive data behind authentication.",
  references: [
    "https://developer.mozilla.org/en-US/docs/Web/HTTP/Guides/CORS",
    "https://portswigger.net/web-security/cors",
  ],
  check(r) {
    const allowed = r.headers.get(ACAO)?.trim();
    if (allowed === "*") return [{ evidence: `${ACAO}: *` }];
    const sent = r.requestHeaders["origin"];
    const withCredentials = r.headers.get("access-control-allow-credentials")?.trim().toLowerCase() === "true";
    if (sent !== undefined && allowed === sent && withCredentials) {
      return [
        {
          evidence: `${ACAO}: ${allowed}`,
          otherInfo: "The server echoed the foreign Origin the scan sent and allows credentials.",
        },
      ];
    }
    return none;
  },
};

export const crossDomainScriptInclusion: PassiveRule = {
  pluginId: 10017,
  alertRef: "10017",
  name: "Cross-Domain JavaScript Source File Inclusion",
  risk: 1,
  confidence: 2,
  cweId: 829,
  wascId: 15,
  inspects: "HTML pages: a `<script src>` on another host without an `integrity` attribute (Subresource Integrity)",
  description:
    "The page runs a script served by another host without Subresource Integrity, so whoever controls that host (or compromises it) controls the page.",
  solution:
    'Serve scripts from the site itself, or pin each third-party script with an integrity hash (and crossorigin="anonymous").',
  references: ["https://developer.mozilla.org/en-US/docs/Web/Security/Subresource_Integrity"],
  check(r) {
    if (!isHtml(r) || !r.html) return none;
    return r.html.elements
      .filter((e) => e.name === "script" && e.attribs["src"] && !e.attribs["integrity"]?.trim())
      .filter((e) => {
        const url = httpUrlOf(e.attribs["src"]!, r.url);
        return url !== null && url.hostname !== r.url.hostname;
      })
      .map((e) => ({ param: e.attribs["src"], evidence: startTag(e) }));
  },
};

/** Attributes that make the browser load (or send to) a URL. */
const LOADING_ATTRIBUTES = [
  "src",
  "background",
  "classid",
  "codebase",
  "data",
  "icon",
  "usemap",
  "action",
  "formaction",
];

interface MixedContent {
  element: HtmlElement;
  attribute: string;
  value: string;
}

function mixedContentOf(r: ObservedResponse): MixedContent[] {
  if (!isHttps(r) || !isHtml(r) || !r.html) return [];
  return r.html.elements.flatMap((element) =>
    LOADING_ATTRIBUTES.filter((attribute) => element.attribs[attribute]?.trim().toLowerCase().startsWith("http:")).map(
      (attribute) => ({
        element,
        attribute,
        value: element.attribs[attribute]!.trim(),
      }),
    ),
  );
}

const includesScript = (found: MixedContent[]) =>
  found.some((m) => m.element.name === "script" && m.attribute === "src");

function mixedContentHit(found: MixedContent[]): RuleHit[] {
  if (found.length === 0) return none;
  return [
    {
      evidence: found[0]!.value,
      otherInfo: found.map((m) => `tag=${m.element.name} ${m.attribute}=${m.value}`).join("\n"),
    },
  ];
}

const MIXED_CONTENT = {
  pluginId: 10040,
  alertRef: "10040",
  confidence: 2,
  cweId: 311,
  wascId: 4,
  description:
    "An https page loads content (or sends a form) over plain http, where anyone on the network can read and change it; a script loaded this way can take over the page.",
  solution:
    "Load every resource of an https page over https (and send Content-Security-Policy: upgrade-insecure-requests while migrating).",
  references: ["https://developer.mozilla.org/en-US/docs/Web/Security/Mixed_content"],
} as const;

export const mixedContent: PassiveRule = {
  ...MIXED_CONTENT,
  name: "Secure Pages Include Mixed Content",
  risk: 1,
  inspects: "https HTML pages: `src`, `action`, `data`, … attributes with `http:` URLs (no script among them)",
  check(r) {
    const found = mixedContentOf(r);
    return includesScript(found) ? none : mixedContentHit(found);
  },
};

export const mixedContentWithScripts: PassiveRule = {
  ...MIXED_CONTENT,
  name: "Secure Pages Include Mixed Content (Including Scripts)",
  risk: 2,
  inspects: 'https HTML pages: as above, with at least one `<script src="http:…">`',
  check(r) {
    const found = mixedContentOf(r);
    return includesScript(found) ? mixedContentHit(found) : none;
  },
};
