// What the console keeps of the provider's token answer: the refresh token (rotated: a renewal's
// answer brings the next one), when the access token expires, when to renew it (at three quarters
// of its life, so a slow provider or a retry still has time), and the ID token (for sign-out).
import type * as oauth from "oauth4webapi";
import type { ProviderSession } from "../session.ts";

const RENEW_AT_FRACTION = 0.75;

export function sessionFrom(tokens: oauth.TokenEndpointResponse, previous?: ProviderSession): ProviderSession {
  const now = Date.now();
  const lifetimeMs = tokens.expires_in === undefined ? undefined : tokens.expires_in * 1000;
  return {
    refreshToken: tokens.refresh_token ?? previous?.refreshToken,
    idToken: tokens.id_token ?? previous?.idToken,
    ...(lifetimeMs === undefined
      ? {}
      : { expiresAt: now + lifetimeMs, renewAt: now + Math.round(lifetimeMs * RENEW_AT_FRACTION) }),
  };
}
