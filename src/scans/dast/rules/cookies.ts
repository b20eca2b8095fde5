// Attributes of the cookies a response sets (HttpOnly, Secure, SameSite), each Set-Cookie header
// read with set-cookie-parser. A cookie that is being deleted (expired, or Max-Age 0 or less) is not
// reported: it no longer exists in the browser.
import { parseSetCookie, type Cookie } from "set-cookie-parser";
import { isHttps, type ObservedResponse } from "../observed-response.ts";
import type { PassiveRule, RuleHit } from "../passive-rule.ts";

/** The cookies the response sets and keeps, named; the same name twice is reported twice, as sent. */
function liveCookies(r: ObservedResponse): Cookie[] {
  const now = Date.now();
  return r.headers
    .all("set-cookie")
    .flatMap((header) => parseSetCookie(header, { decodeValues: false, split: false }))
    .filter((cookie) => cookie.name !== "")
    .filter(
      (cookie) =>
        !(cookie.maxAge !== undefined && cookie.maxAge <= 0) && !(cookie.expires && cookie.expires.getTime() < now),
    );
}

const hitFor = (cookie: Cookie): RuleHit => ({ param: cookie.name, evidence: `set-cookie: ${cookie.name}` });

export const cookieWithoutHttpOnly: PassiveRule = {
  pluginId: 10010,
  alertRef: "10010",
  name: "Cookie No HttpOnly Flag",
  risk: 1,
  confidence: 2,
  cweId: 1004,
  wascId: 13,
  inspects: "every `Set-Cookie` (deletions left out): no `HttpOnly` attribute",
  description:
    "A cookie is set without the HttpOnly attribute, so scripts in the page can read it; a cross-site scripting flaw can then steal it (a session cookie, for instance).",
  solution: "Set the HttpOnly attribute on every cookie that scripts do not need to read.",
  references: [
    "https://owasp.org/www-community/HttpOnly",
    "https://developer.mozilla.org/en-US/docs/Web/HTTP/Headers/Set-Cookie",
  ],
  check: (r) =>
    liveCookies(r)
      .filter((cookie) => !cookie.httpOnly)
      .map(hitFor),
};

export const cookieWithoutSecure: PassiveRule = {
  pluginId: 10011,
  alertRef: "10011",
  name: "Cookie Without Secure Flag",
  risk: 1,
  confidence: 2,
  cweId: 614,
  wascId: 13,
  inspects: "`Set-Cookie` on https responses (deletions left out): no `Secure` attribute",
  description:
    "A cookie set over https lacks the Secure attribute, so the browser also sends it over unencrypted http connections, where anyone on the network can read it.",
  solution: "Set the Secure attribute on every cookie a site served over https sets.",
  references: ["https://developer.mozilla.org/en-US/docs/Web/HTTP/Headers/Set-Cookie"],
  check: (r) =>
    isHttps(r)
      ? liveCookies(r)
          .filter((cookie) => !cookie.secure)
          .map(hitFor)
      : [],
};

const SAME_SITE = {
  references: ["https://developer.mozilla.org/en-US/docs/Web/HTTP/Headers/Set-Cookie#samesitesamesite-value"],
};

export const cookieWithoutSameSite: PassiveRule = {
  pluginId: 10054,
  alertRef: "10054-1",
  name: "Cookie without SameSite Attribute",
  risk: 1,
  confidence: 2,
  cweId: 1275,
  wascId: 13,
  inspects: "every `Set-Cookie` (deletions left out): no `SameSite` attribute",
  description:
    "A cookie is set without a SameSite attribute, so it may be sent along with requests other sites make, the basis of cross-site request forgery and some timing attacks.",
  solution: "Set SameSite=Lax (or Strict) on every cookie.",
  ...SAME_SITE,
  check: (r) =>
    liveCookies(r)
      .filter((cookie) => cookie.sameSite === undefined)
      .map(hitFor),
};

export const cookieSameSiteNone: PassiveRule = {
  pluginId: 10054,
  alertRef: "10054-2",
  name: "Cookie with SameSite Attribute None",
  risk: 1,
  confidence: 2,
  cweId: 1275,
  wascId: 13,
  inspects: "every `Set-Cookie` (deletions left out): `SameSite=None`",
  description:
    "A cookie is set with SameSite=None, so it is sent along with requests made from any other site, the basis of cross-site request forgery.",
  solution: "Use SameSite=Lax or Strict unless the cookie must reach the site from other sites' pages.",
  ...SAME_SITE,
  check: (r) =>
    liveCookies(r)
      .filter((cookie) => cookie.sameSite?.toLowerCase() === "none")
      .map(hitFor),
};

export const cookieSameSiteInvalid: PassiveRule = {
  pluginId: 10054,
  alertRef: "10054-3",
  name: "Cookie with Invalid SameSite Attribute",
  risk: 1,
  confidence: 2,
  cweId: 1275,
  wascId: 13,
  inspects: "every `Set-Cookie` (deletions left out): a `SameSite` value other than `Strict`, `Lax` or `None`",
  description: "A cookie's SameSite attribute has a value browsers do not know, which they treat as if it were absent.",
  solution: "Set SameSite to Lax or Strict.",
  ...SAME_SITE,
  check: (r) =>
    liveCookies(r)
      .filter((cookie) => {
        // set-cookie-parser gives SameSite as sent: "" for the bare attribute.
        const value = cookie.sameSite;
        return value !== undefined && !/^(strict|lax|none)$/i.test(value.trim());
      })
      .map(hitFor),
};
