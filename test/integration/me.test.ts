// Who the token is (docs/spec/CONTRACT.md §17): GET /me and GraphQL me, for any valid token.
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

it("answers the token's subject and scopes as granted; with team access off, no teams and org-wide", async () => {
  const token = await t.token(["scans:read", "applications:read"], "alice");
  const res = await t.request("GET", "/me", { token });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ sub: "alice", scopes: ["scans:read", "applications:read"], teams: null, orgWide: true });

  const admin = await t.request("GET", "/me", { token: await t.token(["admin"], "root") });
  expect(admin.body).toEqual({ sub: "root", scopes: ["admin"], teams: null, orgWide: true });
});

it("needs a valid token, and no scope", async () => {
  expect((await t.request("GET", "/me", { token: null })).status).toBe(401);
  expect((await t.request("GET", "/me", { token: "not.a.token" })).status).toBe(401);
  expect((await t.request("GET", "/me", { token: await t.token(["nothing:useful"], "bob") })).body).toMatchObject({
    sub: "bob",
    scopes: ["nothing:useful"],
  });
});

it("answers the same through GraphQL", async () => {
  const token = await t.token(["vulnerabilities:read"], "carol");
  const res = await t.request("POST", "/graphql", { token, body: { query: "{ me { sub scopes teams orgWide } }" } });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    data: { me: { sub: "carol", scopes: ["vulnerabilities:read"], teams: null, orgWide: true } },
  });
  const anonymous = await t.request("POST", "/graphql", { token: null, body: { query: "{ me { sub } }" } });
  expect(anonymous.body.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
});
