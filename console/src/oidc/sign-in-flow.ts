// Signing in with the identity provider (docs/spec/CONTRACT.md §18): the Authorization Code flow
// with PKCE (S256), `state` and `nonce`, by oauth4webapi, the console being a public client that
// keeps its tokens itself (the "browser-based OAuth client" pattern of the IETF's browser-based
// apps BCP; docs/operators/single-sign-on.md says why). What the flow needs across the redirect
// (the verifier, state, nonce, where to come back to) waits in this tab's sessionStorage.
import * as oauth from "oauth4webapi";
import { signIn, signInFailed, startCompleting } from "../session.ts";
import { grantedAccessProblem } from "./granted-access.ts";
import {
  clientOf,
  providerMetadata,
  ProviderUnreachable,
  redirectUri,
  requestOptions,
  type ProviderSettings,
} from "./provider.ts";
import { sessionFrom } from "./token-response.ts";

const PENDING = "appsec.console.sign-in";
export const CALLBACK_PATH = "/console/callback";

interface Pending {
  codeVerifier: string;
  state: string;
  nonce: string;
  returnTo: string;
}

const resourceParameter = (provider: ProviderSettings) =>
  provider.resource ? { resource: provider.resource } : undefined;

/** Sends the person to the provider's sign-in page; throws ProviderUnreachable when it cannot be reached. */
export async function beginSignIn(provider: ProviderSettings): Promise<void> {
  const as = await providerMetadata(provider);
  if (!as.authorization_endpoint) throw new ProviderUnreachable("its discovery document has no authorization_endpoint");
  const pending: Pending = {
    codeVerifier: oauth.generateRandomCodeVerifier(),
    state: oauth.generateRandomState(),
    nonce: oauth.generateRandomNonce(),
    returnTo: location.pathname === CALLBACK_PATH ? "/" : location.pathname + location.search,
  };
  const url = new URL(as.authorization_endpoint);
  url.search = new URLSearchParams({
    client_id: provider.clientId,
    redirect_uri: redirectUri(),
    response_type: "code",
    scope: provider.scopes,
    code_challenge: await oauth.calculatePKCECodeChallenge(pending.codeVerifier),
    code_challenge_method: "S256",
    state: pending.state,
    nonce: pending.nonce,
    ...resourceParameter(provider),
  }).toString();
  sessionStorage.setItem(PENDING, JSON.stringify(pending));
  location.assign(url);
}

function takePending(): Pending | null {
  const stored = sessionStorage.getItem(PENDING);
  sessionStorage.removeItem(PENDING);
  return stored ? (JSON.parse(stored) as Pending) : null;
}

/** Why a sign-in did not complete, in a sentence for the sign-in page. */
function failure(provider: ProviderSettings, err: unknown): string {
  const name = provider.providerName;
  if (err instanceof ProviderUnreachable || err instanceof TypeError)
    return `${name} could not be reached, so the sign-in could not complete. Try again in a moment; if it persists, the identity provider may be down.`;
  if (err instanceof oauth.AuthorizationResponseError) {
    if (err.error === "access_denied")
      return `The sign-in was cancelled at ${name}: access for the console was not given. Sign in again and allow it to continue.`;
    return `${name} refused the sign-in (${err.error}${err.error_description ? `: ${err.error_description}` : ""}).`;
  }
  if (err instanceof oauth.ResponseBodyError)
    return `${name} refused to issue the console's tokens (${err.error}${err.error_description ? `: ${err.error_description}` : ""}).`;
  if (err instanceof oauth.OperationProcessingError && /"state"/.test(err.message)) return stateMismatch(name);
  return `The answer from ${name} could not be used: ${(err as Error).message}.`;
}

const stateMismatch = (name: string) =>
  `The answer from ${name} does not match the sign-in this tab started (its state differs), so it was not used. It may come from another tab or a link someone sent you. Sign in again.`;

/**
 * Completes the sign-in on the callback page: checks the answer (state, issuer), exchanges the
 * code with the verifier, checks the ID token's nonce, then asks the service whether the token
 * grants any of its scopes before keeping it. The code leaves the address bar at once.
 */
export async function completeSignIn(provider: ProviderSettings): Promise<void> {
  startCompleting();
  const answer = new URL(location.href);
  const pending = takePending();
  history.replaceState(null, "", pending?.returnTo ?? "/");
  if (!pending) return signInFailed(stateMismatch(provider.providerName));
  let tokens: oauth.TokenEndpointResponse;
  try {
    const as = await providerMetadata(provider);
    const client = clientOf(provider);
    const parameters = oauth.validateAuthResponse(as, client, answer, pending.state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.None(),
      parameters,
      redirectUri(),
      pending.codeVerifier,
      { ...requestOptions(provider.issuer), additionalParameters: resourceParameter(provider) },
    );
    tokens = await oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: pending.nonce,
      requireIdToken: true,
    });
  } catch (err) {
    return signInFailed(failure(provider, err));
  }
  const problem = await grantedAccessProblem(provider, tokens.access_token);
  if (problem) return signInFailed(problem);
  signIn(tokens.access_token, sessionFrom(tokens));
}
