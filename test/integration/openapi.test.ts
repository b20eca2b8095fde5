// /openapi.json is derived from the route definitions; these tests keep it true to the router.
import { Validator } from "@seriousme/openapi-schema-validator";
import { koaPath } from "../../src/http/route.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
let doc: any;
beforeAll(async () => {
  t = await startTestApp();
  doc = (await t.request("GET", "/openapi.json", { token: null })).body;
});
afterAll(() => t.close());

const METHODS = ["get", "post", "put", "delete", "patch"];

const documented = () =>
  Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
    Object.keys(ops)
      .filter((m) => METHODS.includes(m))
      .map((m) => `${m.toUpperCase()} ${koaPath(path)}`),
  );

describe("/openapi.json", () => {
  it("validates against the OpenAPI 3.1 schema", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("is an OpenAPI 3.1 document with unique operation ids", () => {
    expect(doc.openapi).toBe("3.1.0");
    const ids = Object.values(doc.paths as Record<string, Record<string, any>>).flatMap((ops) =>
      Object.values(ops).map((o) => o.operationId),
    );
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("documents exactly the routes the router serves", () => {
    const served = t.app.router.stack
      .flatMap((layer) => layer.methods.filter((m) => m !== "HEAD").map((m) => `${m} ${layer.path}`))
      .sort();
    expect(documented().sort()).toEqual(served);
  });

  it("names every operation of docs/spec/SPEC.md §4 with its method and path", () => {
    const ops = new Map<string, string>();
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(methods)) ops.set(op.operationId, `${method.toUpperCase()} ${path}`);
    }
    const spec: Record<string, string> = {
      ListApplications: "GET /applications",
      CreateApplication: "POST /applications",
      GetApplication: "GET /applications/{id}",
      UpdateApplication: "PUT /applications/{id}",
      DeleteApplication: "DELETE /applications/{id}",
      ListApplicationScans: "GET /applications/{id}/scans",
      TriggerApplicationScan: "POST /applications/{id}/scans",
      ListApplicationVulnerabilities: "GET /applications/{id}/vulnerabilities",
      ListPolicies: "GET /policies",
      CreatePolicy: "POST /policies",
      GetPolicy: "GET /policies/{id}",
      UpdatePolicy: "PUT /policies/{id}",
      DeletePolicy: "DELETE /policies/{id}",
      ListWebhooks: "GET /webhooks",
      CreateWebhook: "POST /webhooks",
      GetWebhook: "GET /webhooks/{id}",
      UpdateWebhook: "PUT /webhooks/{id}",
      DeleteWebhook: "DELETE /webhooks/{id}",
    };
    for (const [id, route] of Object.entries(spec)) expect(ops.get(id)).toBe(route);
  });

  it("resolves every $ref to a component", () => {
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(0);
    for (const name of refs) expect(doc.components.schemas[name]).toBeDefined();
  });

  it("documents the security scope and the problem responses of protected operations", () => {
    const op = doc.paths["/applications"].post;
    expect(op.security).toEqual([{ bearerAuth: ["applications:write"] }]);
    for (const status of ["201", "400", "401", "403", "409", "429"]) expect(op.responses[status]).toBeDefined();
    expect(op.responses["201"].headers.Location).toBeDefined();
    expect(op.responses["400"].content["application/problem+json"]).toBeDefined();
  });

  it("documents that redelivering to a disabled subscription is a conflict", () => {
    const op = doc.paths["/webhooks/{id}/deliveries/{deliveryId}/redeliver"].post;
    for (const status of ["202", "404", "409"]) expect(op.responses[status]).toBeDefined();
  });
});
