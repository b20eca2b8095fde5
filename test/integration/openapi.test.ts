// /openapi.json is derived from the route definitions; these tests keep it true to the router.
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
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

  it("lets a GET result be sent back: its id and timestamps are readOnly in the bodies that ignore them", async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ components: doc.components }, "/openapi.json");
    const bodySchema = (path: string, method: string) =>
      JSON.parse(
        JSON.stringify(doc.paths[path][method].requestBody.content["application/json"].schema).replaceAll(
          '"#/components',
          '"/openapi.json#/components',
        ),
      );
    const create = async (path: string, body: unknown) => {
      const res = await t.request("POST", path, { body });
      expect({ path, status: res.status }).toEqual({ path, status: 201 });
      return res.body as { id: string };
    };
    const created = [
      ["/applications/{id}", await create("/applications", { name: "round-trip", tags: ["a"] })],
      ["/policies/{id}", await create("/policies", { name: "round-trip", action: "monitor" })],
      [
        "/webhooks/{id}",
        await create("/webhooks", {
          name: "round-trip",
          url: "https://hooks.example.com/in",
          events: ["scan.completed"],
          secret: "round-trip-secret",
        }),
      ],
    ] as const;
    for (const [path, { id }] of created) {
      // A webhook's masked secret included: sent back, it keeps the stored one.
      const view = (await t.request("GET", path.replace("{id}", id))).body;
      const schema = bodySchema(path, "put");
      for (const field of ["id", "createdAt", "updatedAt"]) expect(schema.properties[field].readOnly).toBe(true);
      // A blank name is refused by the document as by the service.
      const blank = { ...view, name: " \t\u00a0\ufeff" };
      expect(ajv.compile(schema)(blank)).toBe(false);
      expect((await t.request("PUT", path.replace("{id}", id), { body: blank })).status).toBe(400);
      const validate = ajv.compile(schema);
      expect({ path, valid: validate(view), errors: validate.errors ?? null }).toEqual({
        path,
        valid: true,
        errors: null,
      });
      expect((await t.request("PUT", path.replace("{id}", id), { body: view })).status).toBe(200);
    }
  });

  it("documents that redelivering to a disabled subscription is a conflict", () => {
    const op = doc.paths["/webhooks/{id}/deliveries/{deliveryId}/redeliver"].post;
    for (const status of ["202", "404", "409"]) expect(op.responses[status]).toBeDefined();
  });
});
