// Signing out of a provider session (docs/spec/CONTRACT.md §18): the tokens leave this tab first,
// the refresh token is revoked where the provider offers revocation, then the provider's own session
// ends (RP-initiated logout) when it offers an end_session_endpoint; it sends the browser back to
// this origin's `/`. The console's page is replaced in the history, so Back does not return to it.
import * as oauth from "oauth4webapi";
import { providerSession, signOut } from "../session.ts";
import { clientOf, providerMetadata, providerSettings, requestOptions, type ProviderSettings } from "./provider.ts";

/** The sign-out button: at the provider too when the session came from it. */
export function signOutOfSession() {
  const provider = providerSettings();
  if (provider && providerSession()) void signOutAtProvider(provider);
  else signOut();
}

export async function signOutAtProvider(provider: ProviderSettings): Promise<void> {
  const session = providerSession();
  signOut();
  const as = await providerMetadata(provider).catch(() => null);
  if (!as || !session) return;
  if (session.refreshToken && as.revocation_endpoint) {
    await oauth
      .revocationRequest(as, clientOf(provider), oauth.None(), session.refreshToken, {
        ...requestOptions(provider.issuer),
        signal: AbortSignal.timeout(3000),
      })
      .catch(() => {});
  }
  if (!as.end_session_endpoint) return;
  const url = new URL(as.end_session_endpoint);
  url.searchParams.set("client_id", provider.clientId);
  url.searchParams.set("post_logout_redirect_uri", `${location.origin}/`);
  if (session.idToken) url.searchParams.set("id_token_hint", session.idToken);
  location.replace(url);
}
