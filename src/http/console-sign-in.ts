// How the console signs people in (docs/spec/CONTRACT.md §18), told to the page in its HTML so the
// first paint needs no extra request: a <meta name="appsec-sign-in"> holding the provider's issuer,
// the console's (public) client id, the scopes and resource to ask for, and the provider's name.
// Without OIDC_ISSUER and OIDC_CLIENT_ID there is none, and the console keeps its token form.
import { ADMIN_SCOPE, SCOPES } from "../auth/scopes.ts";
import type { Config } from "../config.ts";
import { CONSOLE_CSP } from "./middleware/security-headers.ts";

export interface ConsoleSignIn {
  issuer: string;
  clientId: string;
  scopes: string;
  resource?: string;
  providerName: string;
  /** Every scope of the service, for the sign-in page's sentence when the provider granted none. */
  apiScopes: string[];
}

export function consoleSignIn(config: Config): ConsoleSignIn | undefined {
  if (!config.OIDC_ISSUER || !config.OIDC_CLIENT_ID) return undefined;
  return {
    issuer: config.OIDC_ISSUER,
    clientId: config.OIDC_CLIENT_ID,
    scopes: config.OIDC_SCOPES,
    ...(config.OIDC_RESOURCE ? { resource: config.OIDC_RESOURCE } : {}),
    providerName: config.OIDC_PROVIDER_NAME ?? new URL(config.OIDC_ISSUER).host,
    apiScopes: [...SCOPES, ADMIN_SCOPE],
  };
}

const escapeAttribute = (value: string) =>
  value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** The console's index.html with its sign-in settings in place of the build's placeholder. */
export function withSignIn(html: string, signIn: ConsoleSignIn | undefined): string {
  const meta = signIn ? `<meta name="appsec-sign-in" content="${escapeAttribute(JSON.stringify(signIn))}" />` : "";
  return html.replace("<!-- sign-in -->", meta);
}

/**
 * The console's policy, letting it also reach the provider: its discovery document and, once read,
 * the origins of the endpoints the page calls (tokens, revocation).
 */
export function consoleCsp(
  signIn: ConsoleSignIn | undefined,
  endpoints: () => readonly (string | undefined)[],
): () => string {
  if (!signIn) return () => CONSOLE_CSP;
  return () => {
    const origins = new Set([new URL(signIn.issuer).origin]);
    for (const endpoint of endpoints()) if (endpoint) origins.add(new URL(endpoint).origin);
    return CONSOLE_CSP.replace("connect-src 'self'", `connect-src 'self' ${[...origins].join(" ")}`);
  };
}
