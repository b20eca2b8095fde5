// Team B knocks on every door with team A's ids (docs/spec/CONTRACT.md §17). The doors are not
// listed here: they are every operation of /openapi.json and every root field of the GraphQL schema,
// read at run time, so a door added later is tried without anyone remembering to add it. Each is
// tried with A's ids and with ids that exist nowhere: the two answers must be the same (A's objects do
// not exist for B), a 404 / NOT_FOUND where an id is named, and no answer may carry any of A's ids.
// Afterwards A's objects are exactly as they were: no write went through.
import { jest } from "@jest/globals";
import type { WebhookDispatcher } from "../../src/dispatcher/dispatcher.ts";
import { newId } from "../../src/ids.ts";
import { gql } from "../helpers/graphql.ts";
import { startHttpsReceiver, type HttpsReceiver } from "../helpers/https-receiver.ts";
import { createSelfSignedCert, type SelfSignedCert } from "../helpers/self-signed-cert.ts";
import { teamToken } from "../helpers/team-tokens.ts";
import { dispatcherTrusting, startTestApp, type TestApp, type TestResponse } from "../helpers/test-app.ts";
import { cyclonedxReport, openVex, statement } from "../helpers/vex-documents.ts";

jest.setTimeout(120_000);

interface World {
  token: string;
  application: string;
  scans: { report: string; claimed: string; queued: string };
  vulnerabilities: string[];
  policy: string;
  webhook: string;
  deliveries: string[];
  events: string[];
}

let t: TestApp;
let cert: SelfSignedCert;
let receiver: HttpsReceiver;
let receiverUrl: string;
let dispatcher: WebhookDispatcher;
let doc: any;
let a: World;
let b: World;
/** Every id of team A's objects: none may appear in an answer to team B. */
let secrets: string[];

const REPORT = (team: string) =>
  cyclonedxReport([
    { id: "CVE-2024-0001", purl: `pkg:npm/${team}-parser@1.0.0`, severity: "critical" },
    { id: "CVE-2024-0002", purl: `pkg:npm/${team}-logger@2.0.0`, severity: "high" },
  ]);
const VEX = openVex([statement("CVE-2024-0001", "under_investigation")]);

async function ok(res: TestResponse, status = [200, 201, 202]): Promise<any> {
  if (!status.includes(res.status)) throw new Error(`unexpected ${res.status}: ${res.text}`);
  return res.body;
}

/** A team's full set of objects, made by its own members' tokens. */
async function buildWorld(team: string): Promise<World> {
  const token = await teamToken([team]);
  const agent = await teamToken([team], ["scans:run"], `${team}-agent`);
  const as = { token };
  const webhook = await ok(
    await t.request("POST", "/webhooks", {
      ...as,
      body: {
        name: `${team}-hook`,
        url: receiverUrl,
        events: ["scan.completed", "vulnerability.created"],
        secret: `${team}-webhook-secret-0123456789`,
      },
    }),
  );
  const application = (await ok(await t.request("POST", "/applications", { ...as, body: { name: `${team}-app` } }))).id;
  const report = await ok(
    await t.request("POST", `/applications/${application}/scan-reports`, { ...as, body: REPORT(team) }),
  );
  await ok(await t.request("POST", `/applications/${application}/vex`, { ...as, body: VEX }));
  const policy = await ok(
    await t.request("POST", "/policies", {
      ...as,
      body: { name: `${team}-gate`, action: "block", conditions: { applicationIds: [application] } },
    }),
  );
  const claimed = await ok(
    await t.request("POST", `/applications/${application}/scans`, { ...as, body: { scanType: "sast" } }),
  );
  const claim = await ok(
    await t.request("POST", "/scan-jobs/claim", {
      token: agent,
      body: { scanTypes: ["sast"], agent: `${team}-runner` },
    }),
  );
  expect(claim.scan.id).toBe(claimed.id);
  const queued = await ok(
    await t.request("POST", `/applications/${application}/scans`, { ...as, body: { scanType: "sca" } }),
  );
  const vulnerabilities = (await ok(await t.request("GET", `/applications/${application}/vulnerabilities`, as))).map(
    (v: { id: string }) => v.id,
  );
  const deliveries = await eventually(async () => {
    await dispatcher.runOnce();
    const page = await ok(await t.request("GET", `/webhooks/${webhook.id}/deliveries`, as));
    return page.length >= 3 && page.every((d: { status: string }) => d.status === "delivered") ? page : null;
  });
  const events = await eventually(async () => {
    await dispatcher.runOnce();
    const page = await ok(await t.request("GET", `/events?applicationId=${application}&limit=100`));
    return page.length >= 6 ? page.map((e: { id: string }) => e.id) : null;
  });
  return {
    token,
    application,
    scans: { report: report.id, claimed: claimed.id, queued: queued.id },
    vulnerabilities,
    policy: policy.id,
    webhook: webhook.id,
    deliveries: deliveries.map((d: { id: string }) => d.id),
    events,
  };
}

async function eventually<T>(probe: () => Promise<T | null>, ms = 20_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > until) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  cert = createSelfSignedCert();
  receiver = await startHttpsReceiver(cert);
  receiverUrl = receiver.url("/hook");
  t = await startTestApp({
    AUTH_TEAMS_CLAIM: "teams",
    AUTH_ORG_WIDE_TEAMS: "appsec",
    SCAN_ENGINES: "sast:external,sca:external",
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
  });
  dispatcher = dispatcherTrusting(t, cert.cert);
  doc = (await t.request("GET", "/openapi.json", { token: null })).body;
  a = await buildWorld("team-a");
  b = await buildWorld("team-b");
  secrets = [
    a.application,
    ...Object.values(a.scans),
    ...a.vulnerabilities,
    a.policy,
    a.webhook,
    ...a.deliveries,
    ...a.events,
  ];
  expect(a.vulnerabilities).toHaveLength(2);
  expect(a.events.length).toBeGreaterThanOrEqual(5);
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
  cert?.remove();
});

/** What an admin reads of A's objects: a door that changed any of it let B's write through. */
async function snapshotOfA(): Promise<unknown> {
  const read = async (path: string) => (await t.request("GET", path)).body;
  return {
    application: await read(`/applications/${a.application}`),
    scans: await read(`/applications/${a.application}/scans`),
    vulnerabilities: await read(`/applications/${a.application}/vulnerabilities`),
    history: await read(`/applications/${a.application}/vulnerabilities/${a.vulnerabilities[0]}/history`),
    policy: await read(`/policies/${a.policy}`),
    webhook: await read(`/webhooks/${a.webhook}`),
    deliveries: await read(`/webhooks/${a.webhook}/deliveries`),
  };
}

const leaked = (text: string) => secrets.filter((id) => text.includes(id));

// REST

/** A's object for a path parameter, by the path it is in; a parameter this does not know fails the test. */
function idOfA(path: string, param: string, world: World | null): string {
  if (world === null) return newId();
  if (path.startsWith("/applications/{id}")) {
    if (param === "id") return world.application;
    if (param === "scanId") return world.scans.report;
    if (param === "vulnerabilityId") return world.vulnerabilities[0]!;
  }
  if (path.startsWith("/scan-jobs/{scanId}") && param === "scanId") return world.scans.claimed;
  if (path.startsWith("/webhooks/{id}")) {
    if (param === "id") return world.webhook;
    if (param === "deliveryId") return world.deliveries[0]!;
  }
  if (path.startsWith("/policies/{id}") && param === "id") return world.policy;
  throw new Error(`every-door: no object of team A for {${param}} in ${path}; teach idOfA about it`);
}

/** Bodies that reach the id check where a body sampled from the schema would not (documents). */
const BODIES: Record<string, () => unknown> = {
  UploadScanReport: () => REPORT("team-b"),
  CompleteScanWithReport: () => REPORT("team-b"),
  ApplyVex: () => VEX,
  RecoverWebhookDeliveries: () => ({ since: new Date(Date.now() - 3_600_000).toISOString() }),
  FailScanJob: () => ({ reason: "every-door" }),
};

/** The smallest value `schema` accepts (required properties only), for bodies. */
function sample(schema: any): unknown {
  if (schema?.$ref)
    return sample(
      schema.$ref
        .split("/")
        .slice(1)
        .reduce((node: any, key: string) => node[key], doc),
    );
  for (const alternatives of ["oneOf", "anyOf"]) if (schema?.[alternatives]) return sample(schema[alternatives][0]);
  if (schema?.allOf) return Object.assign({}, ...schema.allOf.map(sample));
  if (schema?.enum) return schema.enum[0];
  if ("const" in (schema ?? {})) return schema.const;
  const type = [schema?.type].flat()[0];
  if (type === "object") {
    return Object.fromEntries((schema.required ?? []).map((key: string) => [key, sample(schema.properties?.[key])]));
  }
  if (type === "array") return Array.from({ length: schema.minItems ?? 0 }, () => sample(schema.items));
  if (type === "string") {
    if (schema.format === "uuid") return newId();
    if (schema.format === "uri") return receiverUrl;
    if (schema.format === "date-time") return new Date().toISOString();
    return "x".repeat(Math.max(1, schema.minLength ?? 1));
  }
  if (type === "integer" || type === "number") return schema.minimum ?? 1;
  if (type === "boolean") return false;
  return {};
}

interface Operation {
  label: string;
  operationId: string;
  method: string;
  path: string;
  params: string[];
  body: () => unknown;
  query: string[];
}

function operations(): Operation[] {
  return Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => {
      const media = op.requestBody?.content && Object.values(op.requestBody.content)[0];
      return {
        label: `${op.operationId} ${method.toUpperCase()} ${path}`,
        operationId: op.operationId,
        method: method.toUpperCase(),
        path,
        params: [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!),
        body: BODIES[op.operationId] ?? (media ? () => sample((media as any).schema) : () => undefined),
        query: (op.parameters ?? []).filter((p: any) => p.in === "query").map((p: any) => p.name),
      };
    }),
  );
}

const pathFor = (op: Operation, world: World | null) =>
  op.path.replace(/\{(\w+)\}/g, (_, param: string) => idOfA(op.path, param, world));

/** Status and problem, without what is per request. */
const answerOf = (res: TestResponse) => ({
  status: res.status,
  type: res.body?.type,
  title: res.body?.title,
  detail: res.body?.detail,
});

describe("every operation of /openapi.json", () => {
  it("answers team B about team A's ids exactly as about ids that exist nowhere: 404, and nothing of A", async () => {
    const before = await snapshotOfA();
    const problems: string[] = [];
    const withIds = operations().filter((op) => op.params.length > 0);
    expect(withIds.length).toBeGreaterThanOrEqual(25);
    for (const op of withIds) {
      const body = op.body();
      const ofA = await t.request(op.method, pathFor(op, a), { token: b.token, body });
      const ofNobody = await t.request(op.method, pathFor(op, null), { token: b.token, body });
      if (ofNobody.status !== 404) problems.push(`${op.label}: an unknown id gets ${ofNobody.status}, not 404`);
      if (JSON.stringify(answerOf(ofA)) !== JSON.stringify(answerOf(ofNobody)))
        problems.push(
          `${op.label}: A's id ${JSON.stringify(answerOf(ofA))}, unknown ${JSON.stringify(answerOf(ofNobody))}`,
        );
      if (leaked(ofA.text).length) problems.push(`${op.label}: the answer carries A's ids`);
    }
    expect(problems).toEqual([]);
    expect(await snapshotOfA()).toEqual(before);
  });

  it("lists, counts and claims nothing of team A for team B, whatever it filters on", async () => {
    const problems: string[] = [];
    const filters: Record<string, string> = { applicationId: a.application, owner: "team-a" };
    const withoutIds = operations().filter((op) => op.params.length === 0);
    for (const op of withoutIds) {
      const queries = ["", ...op.query.filter((q) => q in filters).map((q) => `?${q}=${filters[q]}`)];
      for (const query of queries) {
        const res = await t.request(op.method, op.path + query, { token: b.token, body: op.body() });
        if (res.status >= 500) problems.push(`${op.label}${query}: ${res.status}`);
        if (leaked(res.text).length) problems.push(`${op.label}${query}: carries A's ${leaked(res.text).join(", ")}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("shows team A's objects to an org-wide token on the same doors (the check above can fail)", async () => {
    const appsec = await teamToken(["appsec"]);
    for (const path of ["/applications", "/events?limit=100", "/policies", "/webhooks"]) {
      const res = await t.request("GET", path, { token: appsec });
      expect(leaked(res.text).length).toBeGreaterThan(0);
      expect(res.text).toContain(path === "/events?limit=100" ? b.events[0] : "team-b");
    }
    const res = await t.request("GET", `/applications/${a.application}/vulnerabilities`, { token: appsec });
    expect(res.status).toBe(200);
  });
});

// GraphQL

interface TypeRef {
  kind: string;
  name: string | null;
  ofType: TypeRef | null;
}
interface Field {
  name: string;
  args: { name: string; type: TypeRef }[];
  type: TypeRef;
}
let types: Map<string, { kind: string; fields: Field[] | null; inputFields: Field[] | null }>;

const INTROSPECTION = `{ __schema { queryType { name } mutationType { name } types { name kind
  fields { name type { ...T } args { name type { ...T } } }
  inputFields { name type { ...T } } } } }
  fragment T on __Type { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } }`;

const named = (type: TypeRef): TypeRef => (type.ofType ? named(type.ofType) : type);
const required = (type: TypeRef) => type.kind === "NON_NULL";

/** A selection of every field reachable without required arguments, `depth` levels deep. */
function selection(typeName: string, depth: number): string {
  const type = types.get(typeName)!;
  if (!type.fields) return "";
  const parts = type.fields
    .filter((f) => !f.args.some((arg) => required(arg.type)))
    .flatMap((f) => {
      const inner = named(f.type);
      if (inner.kind === "SCALAR" || inner.kind === "ENUM") return [f.name];
      if (depth === 0 || (inner.kind !== "OBJECT" && inner.kind !== "INTERFACE")) return [];
      const sub = selection(inner.name!, depth - 1);
      return sub ? [`${f.name} { ${sub} }`] : [];
    });
  return parts.join(" ");
}

/** A's id for a GraphQL argument: by its name, or for `id` by the field's. */
function graphqlIdOfA(field: string, arg: string, world: World | null): string {
  if (world === null) return newId();
  if (arg === "applicationId") return world.application;
  if (arg === "webhookId") return world.webhook;
  if (arg === "deliveryId") return world.deliveries[0]!;
  if (arg === "id" && /application/i.test(field)) return world.application;
  if (arg === "id" && /policy/i.test(field)) return world.policy;
  if (arg === "id" && /webhook/i.test(field)) return world.webhook;
  throw new Error(`every-door: no object of team A for the argument ${arg} of ${field}; teach graphqlIdOfA`);
}

/** The smallest value of an input type (required fields only). */
function sampleInput(type: TypeRef): unknown {
  const inner = named(type);
  if (type.kind === "NON_NULL") return sampleInput(type.ofType!);
  if (type.kind === "LIST") return [];
  if (inner.kind === "ENUM") return undefined;
  if (inner.kind === "INPUT_OBJECT") {
    const fields = types.get(inner.name!)!.inputFields!;
    return Object.fromEntries(fields.filter((f) => required(f.type)).map((f) => [f.name, sampleInput(f.type)]));
  }
  if (inner.name === "DateTime") return new Date(Date.now() - 3_600_000).toISOString();
  if (inner.name === "Int") return 1;
  if (inner.name === "Boolean") return false;
  if (inner.name === "JSON") return VEX;
  return "x";
}

const GRAPHQL_INPUTS: Record<string, Record<string, unknown>> = {
  triggerScan: { input: { scanType: "SAST" } },
  updateApplication: { input: { description: "changed by B" } },
  updatePolicy: { input: { name: "renamed by B" } },
  updateWebhook: { input: { name: "renamed by B" } },
};

function operation(kind: "query" | "mutation", field: Field, world: World | null) {
  const variables: Record<string, unknown> = {};
  const declared: string[] = [];
  const passed: string[] = [];
  for (const arg of field.args) {
    const inner = named(arg.type);
    let value: unknown;
    if (inner.name === "ID") value = required(arg.type) ? graphqlIdOfA(field.name, arg.name, world) : undefined;
    else if (arg.name in (GRAPHQL_INPUTS[field.name] ?? {})) value = GRAPHQL_INPUTS[field.name]![arg.name];
    else if (required(arg.type)) value = sampleInput(arg.type);
    if (value === undefined) continue;
    variables[arg.name] = value;
    declared.push(`$${arg.name}: ${printType(arg.type)}`);
    passed.push(`${arg.name}: $${arg.name}`);
  }
  const inner = named(field.type);
  const sub = inner.kind === "OBJECT" ? `{ ${selection(inner.name!, kind === "query" ? 4 : 0) || "__typename"} }` : "";
  const head = declared.length ? `(${declared.join(", ")})` : "";
  const call = passed.length ? `(${passed.join(", ")})` : "";
  return { query: `${kind} Door${head} { ${field.name}${call} ${sub} }`, variables };
}

const printType = (type: TypeRef): string =>
  type.kind === "NON_NULL"
    ? `${printType(type.ofType!)}!`
    : type.kind === "LIST"
      ? `[${printType(type.ofType!)}]`
      : type.name!;

const graphqlAnswer = (res: TestResponse) => ({
  status: res.status,
  data: res.body?.data ?? null,
  codes: (res.body?.errors ?? []).map((e: any) => e.extensions?.code),
});

describe("every root field of the GraphQL schema", () => {
  let roots: { query: Field[]; mutation: Field[] };
  beforeAll(async () => {
    const schema = (await gql(t, INTROSPECTION)).body.data.__schema;
    types = new Map(schema.types.map((type: any) => [type.name, type]));
    roots = {
      query: types.get(schema.queryType.name)!.fields!,
      mutation: types.get(schema.mutationType.name)!.fields!,
    };
  });

  it("answers team B's queries about team A's ids as about ids that exist nowhere, and shows nothing of A", async () => {
    const problems: string[] = [];
    expect(roots.query.length).toBeGreaterThanOrEqual(8);
    for (const field of roots.query) {
      const ofA = await gqlAs(operation("query", field, a), b.token);
      const ofNobody = await gqlAs(operation("query", field, null), b.token);
      if (ofA.status !== 200 || ofA.body.errors?.some((e: any) => e.extensions?.code === "GRAPHQL_VALIDATION_FAILED"))
        problems.push(`${field.name}: ${ofA.text.slice(0, 300)}`);
      if (leaked(ofA.text).length) problems.push(`${field.name}: carries A's ${leaked(ofA.text).join(", ")}`);
      const hasId = field.args.some((arg) => named(arg.type).name === "ID" && required(arg.type));
      if (hasId && !graphqlAnswer(ofA).codes.includes("NOT_FOUND")) problems.push(`${field.name}: not NOT_FOUND`);
      if (JSON.stringify(graphqlAnswer(ofA)) !== JSON.stringify(graphqlAnswer(ofNobody)) && hasId)
        problems.push(
          `${field.name}: A's id ${JSON.stringify(graphqlAnswer(ofA))}, unknown ${JSON.stringify(graphqlAnswer(ofNobody))}`,
        );
    }
    expect(problems).toEqual([]);
  });

  it("filters on team A's application match nothing", async () => {
    for (const query of [
      `{ events(applicationId: "${a.application}") { edges { node { eventId } } } }`,
      `{ vulnerabilities(filter: { applicationId: "${a.application}" }) { totalCount edges { node { id } } } }`,
      `{ applications(filter: { owner: "team-a" }) { totalCount edges { node { id } } } }`,
    ]) {
      const res = await gqlAs({ query, variables: {} }, b.token);
      expect(res.body.errors).toBeUndefined();
      expect(leaked(res.text)).toEqual([]);
      expect(res.text).not.toMatch(/"totalCount":[1-9]/);
    }
  });

  it("refuses team B's mutations of team A's objects as of objects that exist nowhere, and changes nothing", async () => {
    const before = await snapshotOfA();
    const problems: string[] = [];
    const withIds = roots.mutation.filter((f) => f.args.some((arg) => named(arg.type).name === "ID"));
    expect(withIds.length).toBeGreaterThanOrEqual(9);
    for (const field of withIds) {
      const ofA = await gqlAs(operation("mutation", field, a), b.token);
      const ofNobody = await gqlAs(operation("mutation", field, null), b.token);
      if (!graphqlAnswer(ofNobody).codes.includes("NOT_FOUND"))
        problems.push(`${field.name}: unknown ids get ${ofNobody.text.slice(0, 300)}`);
      if (JSON.stringify(graphqlAnswer(ofA)) !== JSON.stringify(graphqlAnswer(ofNobody)))
        problems.push(`${field.name}: A's ${ofA.text.slice(0, 300)}, unknown ${ofNobody.text.slice(0, 300)}`);
      if (leaked(ofA.text).length) problems.push(`${field.name}: carries A's ids`);
    }
    expect(problems).toEqual([]);
    expect(await snapshotOfA()).toEqual(before);
  });

  it("shows team A's objects to an org-wide token (the checks above can fail)", async () => {
    const appsec = await teamToken(["appsec"]);
    const field = roots.query.find((f) => f.name === "applications")!;
    const res = await gqlAs(operation("query", field, a), appsec);
    expect(leaked(res.text).length).toBeGreaterThan(1);
  });
});

const gqlAs = (op: { query: string; variables: Record<string, unknown> }, token: string) =>
  gql(t, op.query, op.variables, { token });
