// Before the console keeps the provider's token, the service says what it grants (GET /me): a token
// the service refuses, or one without any of its scopes, is the provider's configuration at fault,
// not the person, and the sign-in page says what the provider must grant.
import type { ProviderSettings } from "./provider.ts";

interface Me {
  scopes: string[];
}

export async function grantedAccessProblem(provider: ProviderSettings, token: string): Promise<string | null> {
  let response: Response;
  try {
    response = await fetch("/me", { headers: { authorization: `Bearer ${token}` } });
  } catch {
    return "The service could not be reached to check the token the identity provider issued. Try again in a moment.";
  }
  if (response.status === 401) {
    const { detail } = (await response.json().catch(() => ({}))) as { detail?: string };
    return `The service does not accept the token ${provider.providerName} issued${detail ? ` (${detail})` : ""}. This is the configuration of the provider or of the service (issuer, audience, keys), not something you did: tell their administrators.`;
  }
  if (!response.ok)
    return `The service could not check the token ${provider.providerName} issued (${response.status}).`;
  const me = (await response.json()) as Me;
  if (me.scopes.some((scope) => provider.apiScopes.includes(scope))) return null;
  return `You signed in at ${provider.providerName}, but it granted the console none of the service's scopes, so there is nothing it may show you. The provider must grant at least one of ${provider.apiScopes.join(", ")} (in the console client's configuration there, or in OIDC_SCOPES). This is the provider's configuration, not something you did: tell its administrators.`;
}
