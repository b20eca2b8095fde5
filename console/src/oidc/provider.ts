// The identity provider the console signs in with (docs/spec/CONTRACT.md §18), as the service's page
// names it (<meta name="appsec-sign-in">), and its metadata from OpenID discovery, read with
// oauth4webapi when first needed. The console is a public client: no secret, PKCE instead.
import * as oauth from "oauth4webapi";

export interface ProviderSettings {
  issuer: string;
  clientId: string;
  scopes: string;
  resource?: string;
  providerName: string;
  /** Every scope the service knows (a token needs one of them to be of use). */
  apiScopes: string[];
}

let settings: ProviderSettings | null | undefined;

/** The provider the service names, or null when the console signs in with a pasted token. */
export function providerSettings(): ProviderSettings | null {
  if (settings === undefined) {
    const content = document.querySelector<HTMLMetaElement>('meta[name="appsec-sign-in"]')?.content;
    settings = content ? (JSON.parse(content) as ProviderSettings) : null;
  }
  return settings;
}

/** Plain http only to a provider on this machine (development); elsewhere https, as oauth4webapi insists. */
export function requestOptions(url: string) {
  const { protocol, hostname } = new URL(url);
  const loopback = hostname === "localhost" || hostname === "127.0.0.1" || hostname === "[::1]";
  return { [oauth.allowInsecureRequests]: protocol === "http:" && loopback };
}

/** The provider could not be reached, or did not answer as an OpenID provider does. */
export class ProviderUnreachable extends Error {}

let metadata: Promise<oauth.AuthorizationServer> | undefined;

export function providerMetadata(provider: ProviderSettings): Promise<oauth.AuthorizationServer> {
  metadata ??= (async () => {
    const issuer = new URL(provider.issuer);
    try {
      const response = await oauth.discoveryRequest(issuer, {
        ...requestOptions(provider.issuer),
        signal: AbortSignal.timeout(10_000),
      });
      return await oauth.processDiscoveryResponse(issuer, response);
    } catch (err) {
      metadata = undefined;
      throw new ProviderUnreachable((err as Error).message);
    }
  })();
  return metadata;
}

export const clientOf = (provider: ProviderSettings): oauth.Client => ({ client_id: provider.clientId });

/** The redirect URI registered at the provider: the console's callback on this origin. */
export const redirectUri = () => `${location.origin}/console/callback`;
