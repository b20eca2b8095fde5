// For every protected operation in /openapi.json: no token → 401, a token without the documented
// scope → 403 naming exactly that scope, a token with only that scope → neither. This keeps the
// documented scopes and the ones the services enforce the same. An operation documented with
// alternatives (several security requirements, any one enough) is refused naming them all and let
// through by each.
import { SCOPES } from "../../src/auth/scopes.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
let doc: any;
beforeAll(async () => {
  t = await startTestApp();
  doc = (await t.request("GET", "/openapi.json", { token: null })).body;
});
afterAll(() => t.close());

const UNKNOWN_ID = "0190a8c6-0000-7000-8000-000000000000";

function protectedOperations(): { label: string; method: string; path: string; scopes: string[]; body: boolean }[] {
  return Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => op.security?.[0]?.bearerAuth)
      .map(([method, op]) => ({
        label: `${op.operationId} ${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path: path.replace(/\{\w+\}/g, UNKNOWN_ID),
        // [] for an operation any valid token may call (GET /me)
        scopes: op.security.flatMap((requirement: { bearerAuth: string[] }) => requirement.bearerAuth),
        body: Boolean(op.requestBody),
      })),
  );
}

it("documents a scope for every protected operation but the one any valid token may call", () => {
  const ops = protectedOperations();
  expect(ops.length).toBeGreaterThanOrEqual(5);
  for (const op of ops) for (const scope of op.scopes) expect(SCOPES).toContain(scope);
  expect(ops.filter((op) => op.scopes.length === 0).map((op) => op.label)).toEqual(["GetMe GET /me"]);
});

it("answers 401 without a token, 403 naming the scope without it, and lets the scope through", async () => {
  const problems: string[] = [];
  for (const op of protectedOperations()) {
    const body = op.body ? {} : undefined;
    const anonymous = await t.request(op.method, op.path, { token: null, body });
    if (anonymous.status !== 401) problems.push(`${op.label} without token → ${anonymous.status}`);

    const otherScopes = await t.token(["nothing:useful"]);
    const denied = await t.request(op.method, op.path, { token: otherScopes, body });
    const challenge = denied.headers.get("www-authenticate");
    if (op.scopes.length === 0) {
      if (denied.status === 401 || denied.status === 403)
        problems.push(`${op.label} with any token → ${denied.status}`);
    } else if (
      denied.status !== 403 ||
      challenge !== `Bearer error="insufficient_scope", scope="${op.scopes.join(" ")}"`
    ) {
      problems.push(`${op.label} without scope → ${denied.status} ${challenge}`);
    }

    for (const scope of op.scopes) {
      const allowed = await t.request(op.method, op.path, { token: await t.token([scope]), body });
      if (allowed.status === 401 || allowed.status === 403)
        problems.push(`${op.label} with ${scope} → ${allowed.status}`);
    }
  }
  expect(problems).toEqual([]);
});
