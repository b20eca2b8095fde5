// Where a machine client (the agent, `npm run report`) gets its bearer token (docs/spec/CONTRACT.md
// §18): with OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET, by the client credentials grant
// from that issuer (oauth4webapi), kept until three quarters of its life and renewed then, so a run
// longer than a token's life goes on; else the static APPSEC_TOKEN. The secret goes to the token
// endpoint and nowhere else.
import * as oauth from "oauth4webapi";
import { discoverIssuer, requestOptions } from "./issuer-discovery.ts";

export interface MachineTokens {
  /** The token to send now. */
  token(): Promise<string>;
  /** Where tokens come from, for messages (never the token). */
  readonly source: string;
}

const RENEW_AT_FRACTION = 0.75;

export function clientCredentialsTokens(settings: {
  issuer: string;
  clientId: string;
  clientSecret: string;
  scope?: string;
  resource?: string;
  now?: () => number;
}): MachineTokens {
  const now = settings.now ?? Date.now;
  let metadata: Promise<oauth.AuthorizationServer> | undefined;
  let current: { token: string; renewAt: number } | undefined;
  let pending: Promise<string> | undefined;

  const fetchToken = async (): Promise<string> => {
    metadata ??= discoverIssuer(settings.issuer).catch((err: unknown) => {
      metadata = undefined;
      throw err;
    });
    const as = await metadata;
    const client = { client_id: settings.clientId };
    const parameters = new URLSearchParams();
    if (settings.scope) parameters.set("scope", settings.scope);
    if (settings.resource) parameters.set("resource", settings.resource);
    const asked = now();
    const response = await oauth.clientCredentialsGrantRequest(
      as,
      client,
      oauth.ClientSecretBasic(settings.clientSecret),
      parameters,
      { ...requestOptions(settings.issuer), signal: AbortSignal.timeout(10_000) },
    );
    const answer = await oauth.processClientCredentialsResponse(as, client, response).catch((err: unknown) => {
      throw new Error(refusal(err));
    });
    const lifetimeMs = (answer.expires_in ?? 300) * 1000;
    current = { token: answer.access_token, renewAt: asked + lifetimeMs * RENEW_AT_FRACTION };
    return answer.access_token;
  };

  return {
    source: `the client credentials of ${settings.clientId} at ${settings.issuer}`,
    token() {
      if (current && now() < current.renewAt) return Promise.resolve(current.token);
      pending ??= fetchToken().finally(() => (pending = undefined));
      return pending;
    },
  };
}

/** What the provider said when it refused (its error code and description), else the error's message. */
function refusal(err: unknown): string {
  if (err instanceof oauth.ResponseBodyError)
    return `${err.error}${err.error_description ? `: ${err.error_description}` : ""}`;
  if (err instanceof oauth.WWWAuthenticateChallengeError) {
    const { error, error_description } = err.cause[0]?.parameters ?? {};
    if (error) return `${error}${error_description ? `: ${error_description}` : ""}`;
  }
  return (err as Error).message;
}

export const staticToken = (token: string): MachineTokens => ({
  source: "APPSEC_TOKEN",
  token: () => Promise.resolve(token),
});

/**
 * The machine's tokens as its environment says, or the sentence saying what is missing. `purpose`
 * names the scope it needs, for that sentence.
 */
export function machineTokensFromEnv(
  env: Record<string, string | undefined>,
  purpose: { scope: string; tokenHint: string },
): MachineTokens | string {
  const { OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, APPSEC_TOKEN } = env;
  if (OIDC_ISSUER || OIDC_CLIENT_ID || OIDC_CLIENT_SECRET) {
    if (!OIDC_ISSUER || !OIDC_CLIENT_ID || !OIDC_CLIENT_SECRET)
      return "Set OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET together (a confidential client of the client credentials grant)";
    try {
      new URL(OIDC_ISSUER);
    } catch {
      return `OIDC_ISSUER is not a URL: ${OIDC_ISSUER}`;
    }
    return clientCredentialsTokens({
      issuer: OIDC_ISSUER,
      clientId: OIDC_CLIENT_ID,
      clientSecret: OIDC_CLIENT_SECRET,
      scope: env["OIDC_SCOPES"] || purpose.scope,
      resource: env["OIDC_RESOURCE"] || undefined,
    });
  }
  if (APPSEC_TOKEN) return staticToken(APPSEC_TOKEN);
  return `Set APPSEC_TOKEN to a token with the ${purpose.scope} scope (${purpose.tokenHint}), or OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET to take tokens from the identity provider`;
}
