// The authentication and scope rules every protected operation shares (docs/spec/CONTRACT.md §1), as jest
// cases: 401 before validation or existence, and 403 naming the scope for a token holding only
// the opposite one (a write scope does not imply read, nor read write; scans:write is not scans:run).
import type { TestApp } from "./test-app.ts";

/** [method, path, scope, body]: four entries, as jest.each needs rows of one length. */
export type ProtectedOperation = [string, string, string, unknown];

export function itEnforcesAuthRules(
  app: () => TestApp,
  operations: ProtectedOperation[],
  unrelatedScope: string,
): void {
  it.each(operations)(
    "%s %s answers 401 without a valid token, before validation or existence",
    async (method, path, _scope, body) => {
      const t = app();
      const res = await t.request(method, path, {
        token: null,
        body: body === undefined ? undefined : { bogus: true },
      });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe("Bearer");
      const bad = await t.request(method, path, { token: "not.a.jwt" });
      expect(bad.status).toBe(401);
      expect(bad.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
    },
  );

  it.each(operations)("%s %s answers 403 naming %s for a token without it", async (method, path, scope, body) => {
    const t = app();
    // The opposite scope of the resource; for a scope beyond read and write (scans:run), its write.
    const other = scope.endsWith(":read")
      ? scope.replace(":read", ":write")
      : scope.endsWith(":write")
        ? scope.replace(":write", ":read")
        : scope.replace(/:\w+$/, ":write");
    const res = await t.request(method, path, { token: await t.token([unrelatedScope, other]), body });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("forbidden");
    expect(res.headers.get("www-authenticate")).toBe(`Bearer error="insufficient_scope", scope="${scope}"`);
  });
}
