// The service trusts an OpenID issuer (docs/spec/CONTRACT.md §18): keys and issuer from its
// discovery document, scopes and teams from the provider's JWT access tokens, a rotated-in key
// accepted without a restart; tokens of another issuer, audience or key refused as invalid_token.
import { SignJWT, exportJWK, generateKeyPair } from "jose";
import { OTHER_RESOURCE, startTestProvider, type MachineClient, type TestProvider } from "../helpers/oidc-provider.ts";
import { mintToken } from "../../src/auth/mint-token.ts";
import { SCOPES } from "../../src/auth/scopes.ts";
import { startTestApp, TEST_JWT_SECRET, type TestApp } from "../helpers/test-app.ts";

const reader: MachineClient = {
  clientId: "dashboard-exporter",
  clientSecret: "exporter-secret-0123456789",
  scope: "applications:read vulnerabilities:read",
  teams: ["payments"],
};

let provider: TestProvider;
let t: TestApp;
beforeAll(async () => {
  provider = await startTestProvider({ machines: [reader] });
  t = await startTestApp({
    OIDC_ISSUER: provider.issuer,
    AUTH_AUDIENCE: provider.resource,
    AUTH_TEAMS_CLAIM: "groups",
  });
});
afterAll(async () => {
  await t.close();
  await provider.close();
});

const refusedAsInvalid = async (token: string) => {
  const res = await t.request("GET", "/me", { token });
  expect(res.status).toBe(401);
  expect(res.headers.get("www-authenticate")).toMatch(/^Bearer .*error="invalid_token"/);
};

it("takes the provider's access token: its subject, the scopes it granted, its groups as teams", async () => {
  const token = await provider.clientCredentialsToken(reader);
  const me = await t.request("GET", "/me", { token });
  expect(me.status).toBe(200);
  expect(me.body).toEqual({
    sub: reader.clientId,
    scopes: ["applications:read", "vulnerabilities:read"],
    teams: ["payments"],
    orgWide: false,
  });
  expect((await t.request("GET", "/applications", { token })).status).toBe(200);
  expect((await t.request("POST", "/applications", { token, body: { name: "x" } })).status).toBe(403);
});

it("still takes tokens signed with AUTH_JWT_SECRET while it is set", async () => {
  const token = await mintToken({
    secret: TEST_JWT_SECRET,
    sub: "ops",
    scopes: ["admin"],
    audience: provider.resource,
  });
  expect((await t.request("GET", "/me", { token })).body).toMatchObject({ sub: "ops", orgWide: true });
});

it("refuses a token for another audience, from another issuer, or signed by a key the issuer does not publish", async () => {
  await refusedAsInvalid(await provider.clientCredentialsToken(reader, { resource: OTHER_RESOURCE }));

  const other = await startTestProvider({ machines: [reader], resource: provider.resource });
  try {
    await refusedAsInvalid(await other.clientCredentialsToken(reader));
  } finally {
    await other.close();
  }

  const { privateKey, publicKey } = await generateKeyPair("RS256");
  const { kid } = { kid: "not-published", ...(await exportJWK(publicKey)) };
  const forgedUnder = (keyId: string, claims: Record<string, unknown>) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid: keyId })
      .setIssuer(provider.issuer)
      .setAudience(provider.resource)
      .setSubject("mallory")
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(privateKey);
  await refusedAsInvalid(await forgedUnder(kid, { scope: "admin", groups: ["payments"] }));
  // The same claims under a key id the issuer does publish: the signature does not match it.
  await refusedAsInvalid(await forgedUnder(provider.kids()[0]!, { scope: "admin" }));
});

it("accepts a token signed by a key the provider rotated in, without a restart", async () => {
  const before = await provider.clientCredentialsToken(reader);
  expect((await t.request("GET", "/me", { token: before })).status).toBe(200);
  const oldKid = provider.kids()[0];
  await provider.rotateKeys();
  const after = await provider.clientCredentialsToken(reader);
  expect(JSON.parse(Buffer.from(after.split(".")[0]!, "base64url").toString()).kid).not.toBe(oldKid);
  // jose fetches the JWKS again for an unknown key at most every 5 s (the verifier's cooldown).
  await new Promise((resolve) => setTimeout(resolve, 5_500));
  const res = await t.request("GET", "/me", { token: after });
  expect(res.status).toBe(200);
  expect(res.body.sub).toBe(reader.clientId);
});

it("starts while the provider is unreachable, and reads it once it is back", async () => {
  const first = await startTestProvider({ machines: [reader] });
  const { issuer } = first;
  await first.close();
  const service = await startTestApp({ OIDC_ISSUER: issuer, AUTH_TEAMS_CLAIM: "groups" });
  try {
    expect((await service.request("GET", "/healthz", { token: null })).status).toBe(200);
    expect((await service.request("GET", "/me", { token: await service.token(["admin"]) })).status).toBe(200);
    expect((await service.request("GET", "/me", { token: await provider.clientCredentialsToken(reader) })).status).toBe(
      401,
    );
    const back = await startTestProvider({ machines: [reader], port: Number(new URL(issuer).port) });
    try {
      const res = await service.request("GET", "/me", { token: await back.clientCredentialsToken(reader) });
      expect(res.status).toBe(200);
      expect(res.body.teams).toEqual(["payments"]);
    } finally {
      await back.close();
    }
  } finally {
    await service.close();
  }
});

describe("the console's page", () => {
  it("names the provider to sign in with, and may reach it", async () => {
    const withClient = await startTestApp({
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: "appsec-console",
      OIDC_RESOURCE: provider.resource,
      OIDC_PROVIDER_NAME: `Example "SSO" <Okta>`,
    });
    try {
      const page = await withClient.request("GET", "/", { token: null });
      expect(page.status).toBe(200);
      const meta = /<meta name="appsec-sign-in" content="([^"]*)"/.exec(page.text);
      expect(meta).not.toBeNull();
      const decoded = meta![1]!
        .replace(/&quot;/g, '"')
        .replace(/&lt;/g, "<")
        .replace(/&gt;/g, ">")
        .replace(/&amp;/g, "&");
      expect(JSON.parse(decoded)).toEqual({
        issuer: provider.issuer,
        clientId: "appsec-console",
        scopes: "openid profile email offline_access",
        resource: provider.resource,
        providerName: `Example "SSO" <Okta>`,
        apiScopes: [...SCOPES, "admin"],
      });
      expect(page.headers.get("content-security-policy")).toContain(`connect-src 'self' ${provider.issuer}`);
    } finally {
      await withClient.close();
    }
  });

  it("keeps the token form without a client id", async () => {
    const page = await t.request("GET", "/", { token: null });
    expect(page.text).not.toContain("appsec-sign-in");
    expect(page.headers.get("content-security-policy")).toContain("connect-src 'self';");
  });
});

it("reads scopes from the claims AUTH_SCOPE_CLAIMS names (an Entra ID application's `roles`)", async () => {
  const appOnly = await new SignJWT({ roles: ["scans:run", "scans:write"] })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject("entra-app")
    .setAudience(provider.resource)
    .setExpirationTime("5m")
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));
  expect((await t.request("GET", "/me", { token: appOnly })).body.scopes).toEqual([]);
  const withRoles = await startTestApp({ AUTH_AUDIENCE: provider.resource, AUTH_SCOPE_CLAIMS: "scope, scp, roles" });
  try {
    expect((await withRoles.request("GET", "/me", { token: appOnly })).body.scopes).toEqual([
      "scans:run",
      "scans:write",
    ]);
  } finally {
    await withRoles.close();
  }
});
