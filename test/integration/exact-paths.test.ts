// Paths match exactly as /openapi.json declares them: another case or a trailing slash names no
// route (404), so a proxy rule keeping /metrics internal cannot be bypassed by /Metrics.
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

it.each(["/Metrics", "/HEALTHZ", "/APPLICATIONS", "/applications/", "/healthz/", "/Policies", "/SLA"])(
  "answers 404 to %s",
  async (path) => {
    const res = await t.request("GET", path);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("not_found");
  },
);

it.each(["/healthz", "/applications", "/policies", "/sla"])("serves %s as declared", async (path) => {
  expect((await t.request("GET", path)).status).toBe(200);
});
