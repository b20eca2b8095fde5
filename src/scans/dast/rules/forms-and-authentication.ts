// Forms that change state without an anti-CSRF token, and credentials asked for in clear text.
import { startTag, type HtmlForm } from "../html-facts.ts";
import { isHtml, isHttps } from "../observed-response.ts";
import type { PassiveRule, RuleHit } from "../passive-rule.ts";

/**
 * Field names (or ids) frameworks give their anti-CSRF tokens, compared case-insensitively: Django,
 * Rails, Laravel, ASP.NET, Spring Security, Express's csurf, OWASP CSRFGuard, Symfony and others.
 */
export const ANTI_CSRF_TOKEN_NAMES: readonly string[] = [
  "csrfmiddlewaretoken",
  "authenticity_token",
  "_token",
  "__RequestVerificationToken",
  "_csrf",
  "csrf_token",
  "csrfToken",
  "csrf-token",
  "_csrf_token",
  "CSRFToken",
  "OWASP_CSRFTOKEN",
  "anticsrf",
  "anoncsrf",
  "__csrf_magic",
  "_csrfSecret",
  "CSRF",
];
const TOKEN_NAMES = new Set(ANTI_CSRF_TOKEN_NAMES.map((name) => name.toLowerCase()));

/** Forms a browser submits with POST: HTML knows get, post and dialog, and reads any other value as get. */
const postsData = (form: HtmlForm) => form.attribs["method"]?.trim().toLowerCase() === "post";

const hasToken = (form: HtmlForm) =>
  form.controls.some((control) =>
    ["name", "id"].some((attribute) => TOKEN_NAMES.has(control.attribs[attribute]?.toLowerCase() ?? "")),
  );

const fieldsOf = (form: HtmlForm) => [
  ...new Set(form.controls.map((c) => c.attribs["id"] ?? c.attribs["name"]).filter(Boolean)),
];

export const absenceOfAntiCsrfTokens: PassiveRule = {
  pluginId: 10202,
  alertRef: "10202",
  name: "Absence of Anti-CSRF Tokens",
  risk: 2,
  confidence: 1,
  cweId: 352,
  wascId: 9,
  inspects:
    "HTML forms submitted with POST: no field named (or with an id) like a known anti-CSRF token (`csrfmiddlewaretoken`, `authenticity_token`, `_csrf`, …)",
  description:
    "A form that changes state carries no anti-CSRF token, so another site may be able to submit it in the user's name (cross-site request forgery).",
  solution:
    "Protect every state-changing request with a per-session or per-request token the server checks (the framework's CSRF protection), and set SameSite on session cookies.",
  references: ["https://cheatsheetseries.owasp.org/cheatsheets/Cross-Site_Request_Forgery_Prevention_Cheat_Sheet.html"],
  check(r) {
    if (!isHtml(r) || !r.html) return [];
    return r.html.forms.flatMap((form, index): RuleHit[] => {
      if (!postsData(form) || hasToken(form)) return [];
      const fields = fieldsOf(form)
        .map((f) => `"${f}"`)
        .join(" ");
      return [
        {
          evidence: startTag(form),
          otherInfo: `No known anti-CSRF token was found in form ${index + 1} (fields: ${fields || "none"}).`,
        },
      ];
    });
  },
};

export const weakAuthenticationMethod: PassiveRule = {
  pluginId: 10105,
  alertRef: "10105-2",
  name: "Weak Authentication Method",
  risk: 2,
  confidence: 2,
  cweId: 326,
  wascId: 4,
  inspects: "plain-http responses: a `WWW-Authenticate` challenge for Basic or Digest authentication",
  description:
    "The site asks for HTTP Basic or Digest credentials over an unencrypted connection, where anyone on the network can read them (Basic) or attack them (Digest).",
  solution: "Serve the site over https only, or use a stronger authentication mechanism.",
  references: ["https://cheatsheetseries.owasp.org/cheatsheets/Authentication_Cheat_Sheet.html"],
  check(r) {
    if (isHttps(r)) return [];
    return r.headers
      .all("www-authenticate")
      .filter((challenge) => /\b(basic|digest)\b/i.test(challenge))
      .map((challenge) => ({ evidence: `www-authenticate: ${challenge}` }));
  },
};
