// The baseline engine's rules, one row per ZAP alert, in ZAP plugin id order (docs/spec/CONTRACT.md §12). The
// rules table of docs/users/scans-and-agents.md is checked against this one by
// test/unit/dast/passive-rules.test.ts.
import type { PassiveRule } from "./passive-rule.ts";
import {
  cookieSameSiteInvalid,
  cookieSameSiteNone,
  cookieWithoutHttpOnly,
  cookieWithoutSameSite,
  cookieWithoutSecure,
} from "./rules/cookies.ts";
import {
  crossDomainMisconfiguration,
  crossDomainScriptInclusion,
  mixedContent,
  mixedContentWithScripts,
} from "./rules/cross-domain.ts";
import { absenceOfAntiCsrfTokens, weakAuthenticationMethod } from "./rules/forms-and-authentication.ts";
import {
  debugErrorMessages,
  directoryBrowsing,
  privateIpDisclosure,
  serverVersionLeak,
  xPoweredByLeak,
} from "./rules/information-disclosure.ts";
import {
  antiClickjackingMissing,
  cspHeaderNotSet,
  featurePolicyDeprecated,
  hstsDisabled,
  hstsNotSet,
  permissionsPolicyNotSet,
  xContentTypeOptionsMissing,
  xFrameOptionsMalformed,
} from "./rules/security-headers.ts";

export const PASSIVE_RULES: readonly PassiveRule[] = [
  privateIpDisclosure,
  cookieWithoutHttpOnly,
  cookieWithoutSecure,
  crossDomainScriptInclusion,
  antiClickjackingMissing,
  xFrameOptionsMalformed,
  xContentTypeOptionsMissing,
  debugErrorMessages,
  directoryBrowsing,
  hstsNotSet,
  hstsDisabled,
  serverVersionLeak,
  xPoweredByLeak,
  cspHeaderNotSet,
  mixedContent,
  mixedContentWithScripts,
  cookieWithoutSameSite,
  cookieSameSiteNone,
  cookieSameSiteInvalid,
  permissionsPolicyNotSet,
  featurePolicyDeprecated,
  crossDomainMisconfiguration,
  weakAuthenticationMethod,
  absenceOfAntiCsrfTokens,
];
