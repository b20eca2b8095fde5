// A real, certified OpenID provider in the test's process (oidc-provider), configured as a company's
// would be for this service (docs/spec/CONTRACT.md §18): the console as a public client
// (Authorization Code with PKCE, refresh tokens rotating on every use, RP-initiated logout), the
// agent and the report CLI as confidential clients of the client credentials grant, and JWT access
// tokens for the service's resource carrying its scopes and the person's teams (`groups`). People
// sign in on the provider's own (development) login and consent pages with any login name; their
// teams come from `users`.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import type { ClientMetadata, Configuration } from "oidc-provider";
import { SCOPES } from "../../src/auth/scopes.ts";

/** The service's scopes, and `admin`, as the provider's resource server knows them. */
export const SERVICE_SCOPES = [...SCOPES, "admin"].join(" ");
export const CONSOLE_CLIENT_ID = "appsec-console";
/** A resource the provider also serves: its tokens are not for the service. */
export const OTHER_RESOURCE = "https://other.example/api";

export interface MachineClient {
  clientId: string;
  clientSecret: string;
  /** The scopes it may be granted. */
  scope: string;
  teams?: string[];
}

export interface TestProviderOptions {
  /** The service's resource indicator (the access tokens' audience). */
  resource?: string;
  /** Login name → teams. Anyone else signs in with no team. */
  users?: Record<string, string[]>;
  machines?: MachineClient[];
  accessTokenTtlSeconds?: number;
  refreshTokenTtlSeconds?: number;
  /** Default: any free one. */
  port?: number;
}

export interface TestProvider {
  issuer: string;
  resource: string;
  /** The key ids the provider publishes, the signing one first. */
  kids(): string[];
  /** Signs with a new key from now on, publishing it before the old one (kept, as a rotation does). */
  rotateKeys(): Promise<void>;
  /** Registers a console at `origin` (its callback and post-logout URIs), as an administrator would. */
  registerConsole(origin: string): Promise<void>;
  /** How many token requests `clientId` made (each grant and renewal is one). */
  tokenRequests(clientId: string): number;
  /** A client credentials token for `machine`, straight from the token endpoint. */
  clientCredentialsToken(machine: MachineClient, options?: { resource?: string; scope?: string }): Promise<string>;
  close(): Promise<void>;
}

/**
 * Without the provider's warnings that its in-memory store and login pages are for development
 * (here they are) and that Node 20 is older than the LTS it is tested on (it runs on it).
 */
async function quietly<T>(construct: () => T | Promise<T>): Promise<T> {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (!String(args[0]).startsWith("oidc-provider WARNING")) warn(...args);
  };
  try {
    return await construct();
  } finally {
    console.warn = warn;
  }
}

async function signingKey(): Promise<JWK> {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  return { ...(await exportJWK(privateKey)), alg: "RS256", use: "sig", kid: `key-${crypto.randomUUID()}` };
}

export async function startTestProvider(options: TestProviderOptions = {}): Promise<TestProvider> {
  const { default: Provider, errors } = await quietly(() => import("oidc-provider"));
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const resource = options.resource ?? "https://appsec.test/api";
  const users = options.users ?? {};
  const machines = options.machines ?? [];
  const consoles: string[] = [];
  let keys = [await signingKey()];

  const consoleClient = (): ClientMetadata => ({
    client_id: CONSOLE_CLIENT_ID,
    client_name: "AppSec console",
    token_endpoint_auth_method: "none",
    application_type: "web",
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    redirect_uris: consoles.map((origin) => `${origin}/console/callback`),
    post_logout_redirect_uris: consoles.map((origin) => `${origin}/`),
  });
  const configuration = (): Configuration => ({
    clients: [
      ...(consoles.length === 0 ? [] : [consoleClient()]),
      ...machines.map((m) => ({
        client_id: m.clientId,
        client_secret: m.clientSecret,
        grant_types: ["client_credentials"],
        response_types: [],
        redirect_uris: [],
        scope: m.scope,
      })),
    ],
    jwks: { keys },
    // The console calls the token and revocation endpoints from its own origin.
    clientBasedCORS: (_ctx, origin, client) =>
      client.redirectUris?.some((uri) => new URL(uri).origin === origin) ?? false,
    scopes: ["openid", "offline_access", "profile", "email", ...SERVICE_SCOPES.split(" ")],
    cookies: { keys: ["test-provider-cookie-key"] },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub, email: `${sub}@example.test` }) }),
    claims: { openid: ["sub"], email: ["email"] },
    pkce: { required: () => true },
    // Refresh tokens for the console without `offline_access` (whose use OpenID ties to prompt=consent).
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    ttl: {
      AccessToken: options.accessTokenTtlSeconds ?? 60,
      ClientCredentials: options.accessTokenTtlSeconds ?? 60,
      RefreshToken: options.refreshTokenTtlSeconds ?? 3600,
      IdToken: 3600,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
    },
    extraTokenClaims: (_ctx, token) => {
      if ("accountId" in token && token.accountId) return { groups: users[token.accountId] ?? [] };
      const machine = machines.find((m) => m.clientId === token.clientId);
      return machine?.teams ? { groups: machine.teams } : undefined;
    },
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      // A client revokes its own tokens only.
      revocation: { enabled: true, allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId },
      rpInitiatedLogout: {
        enabled: true,
        // The default page imports a web font from the internet; this one asks the same, offline.
        logoutSource: (ctx, form) => {
          ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign out</title></head><body><main><h1>Sign out of the test provider?</h1>${form}<button type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button> <button type="submit" form="op.logoutForm">No, stay signed in</button></main></body></html>`;
        },
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== resource && indicator !== OTHER_RESOURCE) throw new errors.InvalidTarget();
          return {
            scope: SERVICE_SCOPES,
            audience: indicator,
            accessTokenTTL: options.accessTokenTtlSeconds ?? 60,
            accessTokenFormat: "jwt",
            jwt: { sign: { alg: "RS256" } },
          };
        },
      },
    },
  });

  let provider = await quietly(() => new Provider(issuer, configuration()));
  const tokenRequests = new Map<string, number>();
  server.on("request", (req, res) => {
    if (req.method === "POST" && req.url === "/token") {
      const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? "")?.[1];
      const clientId = basic ? decodeURIComponent(Buffer.from(basic, "base64").toString().split(":")[0]!) : "?";
      tokenRequests.set(clientId, (tokenRequests.get(clientId) ?? 0) + 1);
    }
    void provider.callback()(req, res);
  });

  return {
    issuer,
    resource,
    kids: () => keys.map((k) => k.kid!),
    tokenRequests: (clientId) => tokenRequests.get(clientId) ?? 0,
    async registerConsole(origin) {
      consoles.push(origin);
      provider = await quietly(() => new Provider(issuer, configuration()));
    },
    async rotateKeys() {
      keys = [await signingKey(), keys[0]!];
      provider = await quietly(() => new Provider(issuer, configuration()));
    },
    async clientCredentialsToken(machine, request = {}) {
      const res = await fetch(`${issuer}/token`, {
        method: "POST",
        headers: {
          authorization: `Basic ${Buffer.from(`${machine.clientId}:${machine.clientSecret}`).toString("base64")}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({
          grant_type: "client_credentials",
          scope: request.scope ?? machine.scope,
          resource: request.resource ?? resource,
        }),
      });
      const body = (await res.json()) as { access_token?: string; error?: string };
      if (!body.access_token) throw new Error(`the provider refused: ${JSON.stringify(body)}`);
      return body.access_token;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
