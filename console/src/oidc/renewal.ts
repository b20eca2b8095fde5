// Keeps a provider session's access token fresh (docs/spec/CONTRACT.md §18): at three quarters of
// its life it is renewed with the refresh token (the provider rotates it: each answer brings the
// next), with no reload; the views go on and the live connection reconnects with the new token.
// A refresh token the provider refuses (expired, revoked) ends the session with a sentence saying
// so; a provider out of reach is asked again every 10 s until the token expires.
import * as oauth from "oauth4webapi";
import { currentToken, providerSession, renew, signOut, type ProviderSession } from "../session.ts";
import { clientOf, providerMetadata, requestOptions, type ProviderSettings } from "./provider.ts";
import { sessionFrom } from "./token-response.ts";

const RETRY_MS = 10_000;

async function refreshed(provider: ProviderSettings, session: ProviderSession): Promise<void> {
  const as = await providerMetadata(provider);
  const client = clientOf(provider);
  const response = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), session.refreshToken!, {
    ...requestOptions(provider.issuer),
    additionalParameters: provider.resource ? { resource: provider.resource } : undefined,
  });
  const tokens = await oauth.processRefreshTokenResponse(as, client, response);
  renew(tokens.access_token, sessionFrom(tokens, session));
}

/** Renews the session's token while it lasts; returns what stops doing so. */
export function keepRenewed(provider: ProviderSettings): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const name = provider.providerName;

  const schedule = () => {
    const session = providerSession();
    if (stopped || !session?.expiresAt) return;
    if (!session.refreshToken) {
      timer = setTimeout(
        () =>
          signOut(
            `${name} gave the console no refresh token, so the session ended when its access token did. Ask its administrators to allow refresh tokens for the console's client.`,
          ),
        session.expiresAt - Date.now(),
      );
      return;
    }
    timer = setTimeout(() => void attempt(session), Math.max(0, (session.renewAt ?? session.expiresAt) - Date.now()));
  };

  const attempt = async (session: ProviderSession) => {
    const token = currentToken();
    try {
      await refreshed(provider, session);
    } catch (err) {
      if (stopped || currentToken() !== token) return;
      if (err instanceof oauth.ResponseBodyError && err.error === "invalid_grant")
        return signOut(
          `${name} would not renew it: its refresh token has expired or was revoked. Sign in again to go on.`,
        );
      if (Date.now() + RETRY_MS < session.expiresAt!) {
        timer = setTimeout(() => void attempt(session), RETRY_MS);
        return;
      }
      return signOut(`${name} could not be reached to renew it before it expired. Sign in again once it is back.`);
    }
    schedule();
  };

  schedule();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
