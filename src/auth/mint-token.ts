import { SignJWT } from "jose";

export interface MintOptions {
  secret: string;
  sub: string;
  scopes: string[];
  expiresIn?: string | number;
  issuer?: string;
  audience?: string;
  /** The caller's teams, under the claim `teamsClaim` (default `teams`; CONTRACT §17). */
  teams?: string[];
  teamsClaim?: string;
}

/** Mints an HS256 access token with the configured secret (local use, tests, the dev token). */
export async function mintToken(o: MintOptions): Promise<string> {
  const claims: Record<string, unknown> = { scope: o.scopes.join(" ") };
  if (o.teams) claims[o.teamsClaim ?? "teams"] = o.teams;
  let jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(o.sub)
    .setIssuedAt()
    .setExpirationTime(o.expiresIn ?? "12h");
  if (o.issuer) jwt = jwt.setIssuer(o.issuer);
  if (o.audience) jwt = jwt.setAudience(o.audience);
  return jwt.sign(new TextEncoder().encode(o.secret));
}
