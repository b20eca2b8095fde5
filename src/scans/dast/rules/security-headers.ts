// Response headers a careful site sends: CSP, anti-clickjacking, nosniff, HSTS, Permissions-Policy.
// Like ZAP's rules at their default threshold, the page-level ones skip redirects, and those about
// rendering skip error pages and responses with nothing to render.
import { metaHttpEquiv } from "../html-facts.ts";
import { httpUrlOf } from "../http-url.ts";
import { isError, isHtml, isHttps, isJavaScript, isRedirect, type ObservedResponse } from "../observed-response.ts";
import type { PassiveRule, RuleHit } from "../passive-rule.ts";

const none: RuleHit[] = [];

/** A page a browser renders: HTML with a body, neither an error nor a redirect. */
const isRenderedPage = (r: ObservedResponse) => isHtml(r) && r.body.length > 0 && !isError(r) && !isRedirect(r);

/** CSP's frame-ancestors supersedes X-Frame-Options; browsers ignore XFO when it is there. */
const hasFrameAncestors = (r: ObservedResponse) =>
  r.headers.all("content-security-policy").some((policy) => /(^|;)\s*frame-ancestors\b/i.test(policy));

const XFO = "x-frame-options";
const isValidXfo = (value: string) => /^\s*(deny|sameorigin)\s*$/i.test(value);

export const cspHeaderNotSet: PassiveRule = {
  pluginId: 10038,
  alertRef: "10038-1",
  name: "Content Security Policy (CSP) Header Not Set",
  risk: 2,
  confidence: 3,
  cweId: 693,
  wascId: 15,
  inspects: "HTML responses other than redirects: no `Content-Security-Policy` header and no `<meta http-equiv>` CSP",
  description:
    "The page sets no Content Security Policy. A CSP tells the browser which sources of scripts, styles, frames and other content the page may load, which limits what an injected script (cross-site scripting) or injected content can do.",
  solution:
    "Send a Content-Security-Policy header on every HTML response (from the application, the web server or the load balancer), starting from a strict policy such as default-src 'self'.",
  references: [
    "https://developer.mozilla.org/en-US/docs/Web/HTTP/Guides/CSP",
    "https://cheatsheetseries.owasp.org/cheatsheets/Content_Security_Policy_Cheat_Sheet.html",
  ],
  check(r) {
    if (!isHtml(r) || isRedirect(r)) return none;
    if (
      r.headers.has("content-security-policy") ||
      (r.html && metaHttpEquiv(r.html, "content-security-policy") !== undefined)
    )
      return none;
    return [{}];
  },
};

export const antiClickjackingMissing: PassiveRule = {
  pluginId: 10020,
  alertRef: "10020-1",
  name: "Missing Anti-clickjacking Header",
  risk: 2,
  confidence: 2,
  cweId: 1021,
  wascId: 15,
  inspects:
    "rendered HTML pages (not errors or redirects): neither `X-Frame-Options` nor a CSP `frame-ancestors` directive",
  description:
    "The page does not tell browsers whether other sites may frame it, so a hostile site can load it in an invisible frame and trick the user into clicking on it (clickjacking).",
  solution:
    "Send Content-Security-Policy: frame-ancestors 'none' (or 'self'), or X-Frame-Options: DENY (or SAMEORIGIN) for older browsers.",
  references: [
    "https://developer.mozilla.org/en-US/docs/Web/HTTP/Headers/X-Frame-Options",
    "https://cheatsheetseries.owasp.org/cheatsheets/Clickjacking_Defense_Cheat_Sheet.html",
  ],
  check(r) {
    if (!isRenderedPage(r) || hasFrameAncestors(r) || r.headers.has(XFO)) return none;
    return [{ param: XFO }];
  },
};

export const xFrameOptionsMalformed: PassiveRule = {
  pluginId: 10020,
  alertRef: "10020-4",
  name: "X-Frame-Options Setting Malformed",
  risk: 2,
  confidence: 2,
  cweId: 1021,
  wascId: 15,
  inspects:
    "rendered HTML pages without CSP `frame-ancestors`: an `X-Frame-Options` value other than `DENY` or `SAMEORIGIN`",
  description:
    "The X-Frame-Options header has a value browsers do not recognise (only DENY and SAMEORIGIN are defined), so it protects nothing against clickjacking.",
  solution: "Set X-Frame-Options to DENY or SAMEORIGIN, or use the CSP frame-ancestors directive instead.",
  references: ["https://developer.mozilla.org/en-US/docs/Web/HTTP/Headers/X-Frame-Options"],
  check(r) {
    if (!isRenderedPage(r) || hasFrameAncestors(r)) return none;
    return r.headers
      .all(XFO)
      .filter((value) => !isValidXfo(value))
      .map((value) => ({ param: XFO, evidence: value }));
  },
};

const XCTO = "x-content-type-options";

export const xContentTypeOptionsMissing: PassiveRule = {
  pluginId: 10021,
  alertRef: "10021",
  name: "X-Content-Type-Options Header Missing",
  risk: 1,
  confidence: 2,
  cweId: 693,
  wascId: 15,
  inspects: "every response with a body, except errors and redirects: `X-Content-Type-Options` absent or not `nosniff`",
  description:
    "The response does not send X-Content-Type-Options: nosniff, so some browsers may guess (sniff) a content type other than the declared one and, for example, run an uploaded text file as a script.",
  solution: "Send X-Content-Type-Options: nosniff on every response, and a correct Content-Type.",
  references: ["https://developer.mozilla.org/en-US/docs/Web/HTTP/Headers/X-Content-Type-Options"],
  check(r) {
    if (r.body.length === 0 || isError(r) || isRedirect(r)) return none;
    const values = r.headers.all(XCTO);
    if (values.length === 0) return [{ param: XCTO }];
    return values.filter((value) => !/nosniff/i.test(value)).map((value) => ({ param: XCTO, evidence: value }));
  },
};

/** A redirect that stays on https on the same host and port keeps the connection protected: its own HSTS header is not needed. */
function redirectsWithinHttps(r: ObservedResponse): boolean {
  const target = isRedirect(r) ? httpUrlOf(r.headers.get("location") ?? "", r.url) : null;
  return target?.protocol === "https:" && target.host === r.url.host;
}

const STS = "strict-transport-security";

export const hstsNotSet: PassiveRule = {
  pluginId: 10035,
  alertRef: "10035-1",
  name: "Strict-Transport-Security Header Not Set",
  risk: 1,
  confidence: 3,
  cweId: 319,
  wascId: 15,
  inspects: "https responses (except redirects to https on the same host): no `Strict-Transport-Security` header",
  description:
    "The site does not send HTTP Strict Transport Security, so a browser that is sent to http:// (a typed address, an old link, an attacker on the network) talks to it in clear text before any redirect.",
  solution: "Send Strict-Transport-Security: max-age=31536000; includeSubDomains on every https response.",
  references: [
    "https://developer.mozilla.org/en-US/docs/Web/HTTP/Headers/Strict-Transport-Security",
    "https://cheatsheetseries.owasp.org/cheatsheets/HTTP_Strict_Transport_Security_Cheat_Sheet.html",
  ],
  check(r) {
    if (!isHttps(r) || r.headers.has(STS) || redirectsWithinHttps(r)) return none;
    return [{}];
  },
};

export const hstsDisabled: PassiveRule = {
  pluginId: 10035,
  alertRef: "10035-2",
  name: "Strict-Transport-Security Disabled",
  risk: 1,
  confidence: 3,
  cweId: 319,
  wascId: 15,
  inspects: "https responses: a `Strict-Transport-Security` header with `max-age=0`, which turns HSTS off",
  description:
    "The Strict-Transport-Security header has max-age=0, which tells browsers to forget the site's HSTS policy: the site is not protected by it.",
  solution: "Give max-age a long lifetime (e.g. 31536000 seconds, one year).",
  references: ["https://developer.mozilla.org/en-US/docs/Web/HTTP/Headers/Strict-Transport-Security"],
  check(r) {
    if (!isHttps(r)) return none;
    return r.headers
      .all(STS)
      .filter((value) => /(^|;)\s*max-age\s*=\s*"?0+"?\s*(;|$)/i.test(value))
      .map((value) => ({ evidence: value }));
  },
};

const needsPermissionsPolicy = (r: ObservedResponse) => (isHtml(r) || isJavaScript(r)) && !isRedirect(r);

export const permissionsPolicyNotSet: PassiveRule = {
  pluginId: 10063,
  alertRef: "10063-1",
  name: "Permissions Policy Header Not Set",
  risk: 1,
  confidence: 2,
  cweId: 693,
  wascId: 15,
  inspects:
    "HTML and JavaScript responses other than redirects: neither `Permissions-Policy` nor the older `Feature-Policy`",
  description:
    "The response does not restrict which browser features (camera, microphone, geolocation, full screen, …) the page and the frames it embeds may use.",
  solution:
    "Send a Permissions-Policy header that turns off the features the site does not use, e.g. camera=(), microphone=(), geolocation=().",
  references: ["https://developer.mozilla.org/en-US/docs/Web/HTTP/Headers/Permissions-Policy"],
  check(r) {
    if (!needsPermissionsPolicy(r) || r.headers.has("permissions-policy") || r.headers.has("feature-policy"))
      return none;
    return [{}];
  },
};

export const featurePolicyDeprecated: PassiveRule = {
  pluginId: 10063,
  alertRef: "10063-2",
  name: "Deprecated Feature Policy Header Set",
  risk: 1,
  confidence: 2,
  cweId: 16,
  wascId: 15,
  inspects: "HTML and JavaScript responses other than redirects: the deprecated `Feature-Policy` header",
  description:
    "The response restricts browser features with Feature-Policy, a header browsers have replaced with Permissions-Policy.",
  solution: "Send Permissions-Policy instead of Feature-Policy.",
  references: ["https://developer.mozilla.org/en-US/docs/Web/HTTP/Headers/Permissions-Policy"],
  check(r) {
    if (!needsPermissionsPolicy(r) || !r.headers.has("feature-policy")) return none;
    return [{ evidence: "feature-policy" }];
  },
};
