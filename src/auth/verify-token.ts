// Bearer token verification with jose (docs/spec/CONTRACT.md §1): an algorithm allow-list, exp required,
// nbf honoured with 30 s skew, iss/aud checked when configured. With an OpenID issuer (§18), its
// discovery document gives the keys and the issuer of the provider's (asymmetric) tokens; tokens
// signed with the shared secret are checked as before.
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JWTVerifyGetKey } from "jose";
import type { IssuerMetadata } from "./issuer-discovery.ts";
import { ADMIN_SCOPE, type Actor } from "./scopes.ts";
import { InvalidTeamsClaim, teamAccessOf, type TeamSettings } from "./teams.ts";
import { createVerifiedTokens } from "./verified-tokens.ts";

export interface AuthSettings {
  jwtSecret?: string;
  jwksUrl?: string;
  /** OIDC_ISSUER's metadata: where the keys (unless jwksUrl) and the expected issuer (unless issuer) come from. */
  provider?: IssuerMetadata;
  issuer?: string;
  audience?: string;
  /** The claims scopes are read from (default `scope`, `scp`). */
  scopeClaims?: readonly string[];
  teams?: TeamSettings;
}

export class InvalidTokenError extends Error {
  /** "missing": no credentials at all (WWW-Authenticate without an error code, RFC 6750 §3.1). */
  constructor(
    readonly reason: "missing" | "invalid_token",
    message: string,
  ) {
    super(message);
  }
}

const ASYMMETRIC = ["RS256", "ES256", "EdDSA"];
const CLOCK_SKEW_SECONDS = 30;
/**
 * A token naming a key the JWKS does not hold makes jose fetch the JWKS again, at most this often:
 * a key the provider has just rotated in is accepted within seconds (and garbage `kid`s cannot make
 * the service hammer the provider).
 */
const JWKS_COOLDOWN_MS = 5_000;

const remoteKeys = (url: string) => createRemoteJWKSet(new URL(url), { cooldownDuration: JWKS_COOLDOWN_MS });

export type TokenVerifier = (authorizationHeader: string | undefined) => Promise<Actor>;

export function createTokenVerifier(settings: AuthSettings): TokenVerifier {
  const secret = settings.jwtSecret ? new TextEncoder().encode(settings.jwtSecret) : undefined;
  const provider = settings.provider;
  let jwks: Promise<JWTVerifyGetKey> | undefined = settings.jwksUrl
    ? Promise.resolve(remoteKeys(settings.jwksUrl))
    : undefined;
  const providerKeys = () => {
    jwks ??= provider!.get().then(
      (metadata) => {
        if (!metadata.jwks_uri) throw new Error("the issuer's discovery document has no jwks_uri");
        return remoteKeys(metadata.jwks_uri);
      },
      (err: unknown) => {
        jwks = undefined;
        throw err;
      },
    );
    return jwks;
  };
  const asymmetric = Boolean(settings.jwksUrl || provider);
  const algorithms = [...(secret ? ["HS256"] : []), ...(asymmetric ? ASYMMETRIC : [])];
  const getKey: JWTVerifyGetKey = async (header, token) => {
    if (header.alg === "HS256" && secret) return secret;
    if (asymmetric) return (await providerKeys())(header, token);
    throw new Error("no key for this algorithm");
  };
  /** The provider's tokens carry its issuer; shared-secret ones only what AUTH_ISSUER demands. */
  const issuerFor = async (token: string) => {
    if (settings.issuer || !provider || decodeProtectedHeader(token).alg === "HS256") return settings.issuer;
    return (await provider.get()).issuer;
  };

  const teams = settings.teams ?? { orgWideTeams: [] };
  const verified = createVerifiedTokens({ maxEntries: 10_000, maxAgeMs: 60_000, skewSeconds: CLOCK_SKEW_SECONDS });

  return async (header) => {
    if (!header) throw new InvalidTokenError("missing", "Missing bearer token");
    const match = /^Bearer +([A-Za-z0-9\-_]+\.[A-Za-z0-9\-_]+\.[A-Za-z0-9\-_]*) *$/i.exec(header);
    if (!match) throw new InvalidTokenError("invalid_token", "Malformed Authorization header");
    const token = match[1]!;
    const known = verified.get(token);
    if (known) return known;
    try {
      const { payload } = await jwtVerify(token, getKey, {
        algorithms,
        clockTolerance: CLOCK_SKEW_SECONDS,
        requiredClaims: ["exp"],
        issuer: await issuerFor(token),
        audience: settings.audience,
      });
      if (typeof payload.sub !== "string" || payload.sub === "") throw new Error("sub claim missing");
      const scopes = scopesOf(payload, settings.scopeClaims ?? DEFAULT_SCOPE_CLAIMS);
      const access = teamAccessOf(payload, scopes.has(ADMIN_SCOPE), teams);
      const actor: Actor = { sub: payload.sub, scopes, exp: payload.exp!, ...access };
      verified.set(token, actor);
      return actor;
    } catch (err) {
      if (err instanceof InvalidTeamsClaim) throw new InvalidTokenError("invalid_token", err.message);
      // jose's reason (expired, bad signature, ...) is not echoed: it helps attackers more than callers.
      throw new InvalidTokenError("invalid_token", "The access token is invalid or expired");
    }
  };
}

const DEFAULT_SCOPE_CLAIMS = ["scope", "scp"];

function scopesOf(payload: Record<string, unknown>, claims: readonly string[]): Set<string> {
  const scopes = new Set<string>();
  const add = (v: unknown) => {
    if (typeof v === "string")
      v.split(" ")
        .filter(Boolean)
        .forEach((s) => scopes.add(s));
    else if (Array.isArray(v)) v.filter((s) => typeof s === "string").forEach((s) => scopes.add(s));
  };
  for (const claim of claims) add(payload[claim]);
  return scopes;
}
