// The identity provider's metadata, from its OpenID Connect discovery document (CONTRACT §18),
// read with oauth4webapi, which checks that the document names the issuer it was asked for. Plain
// http is accepted for a loopback issuer only (a provider on the same machine, as in development).
import * as oauth from "oauth4webapi";

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** The options oauth4webapi needs for requests to `url`: http only to loopback. */
export const requestOptions = (url: URL | string) => {
  const { protocol, hostname } = new URL(url);
  return { [oauth.allowInsecureRequests]: protocol === "http:" && LOOPBACK.has(hostname) };
};

export async function discoverIssuer(issuer: string, signal?: AbortSignal): Promise<oauth.AuthorizationServer> {
  const url = new URL(issuer);
  const response = await oauth.discoveryRequest(url, {
    ...requestOptions(url),
    signal: signal ?? AbortSignal.timeout(10_000),
  });
  return oauth.processDiscoveryResponse(url, response);
}

/**
 * The issuer's metadata, read once it is first needed and kept; a failed read is not kept, so
 * a provider unreachable at start-up is read again on the next call.
 */
export interface IssuerMetadata {
  get(): Promise<oauth.AuthorizationServer>;
  /** What the last successful read gave, if any. */
  known(): oauth.AuthorizationServer | undefined;
}

export function issuerMetadata(issuer: string): IssuerMetadata {
  let pending: Promise<oauth.AuthorizationServer> | undefined;
  let known: oauth.AuthorizationServer | undefined;
  return {
    get() {
      pending ??= discoverIssuer(issuer).then(
        (metadata) => (known = metadata),
        (err: unknown) => {
          pending = undefined;
          throw err;
        },
      );
      return pending;
    },
    known: () => known,
  };
}
