// The API document as tools nobody here wrote read it: Spectral's `spectral:oas` and Redocly's
// `recommended` rules, with the committed rulesets (.spectral.yaml, redocly.yaml) that name each
// rule turned off and why. Without an identity provider and with one (its OAuth 2.0 flows join).
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { lintFromString, loadConfig } from "@redocly/openapi-core";
import { SCOPES } from "../../src/auth/scopes.ts";
import { startTestProvider, type TestProvider } from "../helpers/oidc-provider.ts";
import { eventually } from "../helpers/scan-engines.ts";
import { ROOT } from "../helpers/service-process.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let plain: TestApp;
let withProvider: TestApp;
let provider: TestProvider;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "api-lint-"));
  provider = await startTestProvider();
  plain = await startTestApp();
  withProvider = await startTestApp({ OIDC_ISSUER: provider.issuer, AUTH_AUDIENCE: provider.resource });
});
afterAll(async () => {
  await plain?.close();
  await withProvider?.close();
  await provider?.close();
  await rm(dir, { recursive: true, force: true });
});

const documentOf = async (t: TestApp) => (await t.request("GET", "/openapi.json", { token: null })).body;

/** The provider's flows join the document once its discovery has been read. */
const documentWithFlows = () =>
  eventually(async () => {
    const doc = await documentOf(withProvider);
    return doc.components.securitySchemes.oauth2 ? doc : undefined;
  });

async function spectral(doc: unknown): Promise<string[]> {
  const file = path.join(dir, `openapi-${crypto.randomUUID()}.json`);
  await writeFile(file, JSON.stringify(doc));
  const { stdout } = await promisify(execFile)(
    path.join(ROOT, "node_modules/.bin/spectral"),
    ["lint", "--ruleset", path.join(ROOT, ".spectral.yaml"), "--format", "json", "--fail-severity", "hint", file],
    { cwd: ROOT },
  );
  const results = JSON.parse(stdout.slice(0, stdout.lastIndexOf("]") + 1)) as {
    code: string;
    message: string;
    path: string[];
  }[];
  return results.map((r) => `${r.code}: ${r.message} at ${r.path.join(".")}`);
}

async function redocly(t: TestApp, doc: unknown): Promise<string[]> {
  const config = await loadConfig({ configPath: path.join(ROOT, "redocly.yaml") });
  const problems = await lintFromString({
    source: JSON.stringify(doc),
    absoluteRef: `${t.baseUrl}/openapi.json`,
    config,
  });
  return problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
}

it("passes Spectral's spectral:oas rules with no error, warning or hint", async () => {
  expect(await spectral(await documentOf(plain))).toEqual([]);
  expect(await spectral(await documentWithFlows())).toEqual([]);
});

it("passes Redocly's recommended rules with no error or warning", async () => {
  expect(await redocly(plain, await documentOf(plain))).toEqual([]);
  expect(await redocly(withProvider, await documentWithFlows())).toEqual([]);
});

it("the rulesets say why each rule they turn off is off", async () => {
  for (const file of [".spectral.yaml", "redocly.yaml"]) {
    const lines = (await readFile(path.join(ROOT, file), "utf8")).split("\n");
    const off = lines.flatMap((line, i) => (/^\s+[\w-]+: off\s*$/.test(line) ? [i] : []));
    expect(off.length).toBeGreaterThan(0);
    for (const i of off) expect(lines[i - 1]).toMatch(/^\s+# \S/);
  }
});

it("describes every scope, and the provider's flows offer each scope an operation needs", async () => {
  const doc = await documentWithFlows();
  const { bearerAuth, oauth2 } = doc.components.securitySchemes;
  expect(Object.keys(bearerAuth["x-scopes"]).sort()).toEqual([...SCOPES, "admin"].sort());
  const metadata = await (await fetch(`${provider.issuer}/.well-known/openid-configuration`)).json();
  expect(oauth2.flows.clientCredentials.tokenUrl).toBe(metadata.token_endpoint);
  expect(oauth2.flows.authorizationCode.authorizationUrl).toBe(metadata.authorization_endpoint);
  const needed = new Set<string>();
  for (const operations of Object.values(doc.paths) as Record<string, { security: Record<string, string[]>[] }>[]) {
    for (const op of Object.values(operations)) {
      for (const requirement of op.security) for (const scope of requirement.oauth2 ?? []) needed.add(scope);
      // Each alternative is offered by both schemes.
      const bySchemes = op.security.map((r) => Object.keys(r).join());
      expect(bySchemes.filter((s) => s === "oauth2").length).toBe(bySchemes.filter((s) => s === "bearerAuth").length);
    }
  }
  expect(needed.size).toBeGreaterThan(5);
  for (const scope of needed) expect(Object.keys(oauth2.flows.clientCredentials.scopes)).toContain(scope);
  expect(doc.tags.map((t: { name: string }) => t.name)).toContain("Applications");
});
