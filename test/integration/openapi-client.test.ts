// What generated clients make of /openapi.json (issue 11, item 7; the linters are
// api-document-lint.test.ts): a client typed by openapi-typescript and calling through openapi-fetch type-checks
// the calls the service accepts, refuses at compile time the ones it would refuse (`limit` as a
// string, an event type outside the catalogue, `status: "error"`), and then runs against the service.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";
import { absoluteUrlPattern } from "../../src/domain/validation.ts";
import { ROOT } from "../helpers/service-process.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
let doc: any;
beforeAll(async () => {
  t = await startTestApp();
  doc = (await t.request("GET", "/openapi.json", { token: null })).body;
});
afterAll(() => t.close());

it("describes values as they are, without zod's noise", () => {
  const text = JSON.stringify(doc);
  expect(text).not.toContain(String(Number.MAX_SAFE_INTEGER));
  // No regex beside a date-time (zod's own, which the format says); the patterns left are the rules
  // the service checks, e.g. the names' not-blank rule and the URLs' schemes.
  const withPattern: Record<string, unknown>[] = [];
  JSON.parse(text, (_key, value) => {
    if (value && typeof value === "object" && "pattern" in value) withPattern.push(value);
    return value;
  });
  expect(withPattern.filter((s) => s.format === "date-time" || s.format === "date")).toEqual([]);
  const patterns = new Set(withPattern.map((s) => s.pattern));
  for (const rule of ["\\S", absoluteUrlPattern("http(s)"), absoluteUrlPattern("https", { credentials: false })]) {
    expect(patterns).toContain(rule);
  }
  const limit = doc.paths["/applications"].get.parameters.find((p: { name: string }) => p.name === "limit");
  expect(limit).toMatchObject({ required: false, schema: { type: "integer", minimum: 1, maximum: 500, default: 100 } });
  expect(doc.components.schemas.Application.properties.createdAt).toEqual({ type: "string", format: "date-time" });
});

const CLIENT = `
import createClient from "openapi-fetch";
import type { paths } from "./api";

const [baseUrl, token] = process.argv.slice(2) as [string, string];
const client = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${token}\` } });

const app = await client.POST("/applications", { body: { name: "typed-client", tags: ["typed", "client"], repoUrl: "https://git.example.com/typed" } });
const page = await client.GET("/applications", { params: { query: { limit: 5, tag: ["typed", "client"] } } });
const hook = await client.POST("/webhooks", {
  body: { name: "typed-hook", url: "https://hooks.example.com/typed", events: ["scan.completed", "vulnerability.created"], secret: "typed-secret" },
});
const updated = await client.PUT("/webhooks/{id}", { params: { path: { id: hook.data!.id } }, body: { status: "disabled" } });
const names: string[] = page.data!.map((a) => a.name);
const status: "active" | "disabled" | "error" = updated.data!.status;
console.log(JSON.stringify({ created: app.response.status, names, status }));

export function refusedAtCompileTime() {
  // @ts-expect-error limit is an integer
  void client.GET("/applications", { params: { query: { limit: "5" } } });
  // @ts-expect-error events come from the catalogue
  void client.POST("/webhooks", { body: { name: "x", url: "https://h.example.com", events: ["scan.done"], secret: "s" } });
  // @ts-expect-error the service alone sets a subscription in error
  void client.PUT("/webhooks/{id}", { params: { path: { id: "x" } }, body: { status: "error" } });
}
`;

describe("a client generated with openapi-typescript and openapi-fetch", () => {
  let dir: string;
  // Under node_modules, so both TypeScript and Node find openapi-fetch from there.
  beforeAll(async () => (dir = await mkdtemp(path.join(ROOT, "node_modules", ".openapi-client-"))));
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("type-checks the calls the service accepts, refuses the others, and runs", async () => {
    await writeFile(path.join(dir, "api.d.ts"), astToString(await openapiTS(doc)));
    await writeFile(path.join(dir, "client.ts"), CLIENT);

    const options: ts.CompilerOptions = {
      strict: true,
      noUncheckedIndexedAccess: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      skipLibCheck: true,
      types: ["node"],
      typeRoots: [path.join(ROOT, "node_modules", "@types")],
      noEmit: true,
    };
    const program = ts.createProgram([path.join(dir, "client.ts")], options);
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    expect(diagnostics).toEqual([]);

    const js = ts.transpileModule(CLIENT, {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
    }).outputText;
    await writeFile(path.join(dir, "client.mjs"), js);
    const { stdout } = await promisify(execFile)(process.execPath, [
      path.join(dir, "client.mjs"),
      t.baseUrl,
      await t.token(),
    ]);
    expect(JSON.parse(stdout)).toEqual({ created: 201, names: ["typed-client"], status: "disabled" });
  });
});
