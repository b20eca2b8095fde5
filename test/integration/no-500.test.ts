// Throws malformed bodies, types, ids and query strings at every operation in /openapi.json
// (so operations added later are covered too) and checks that none is answered with a 5xx:
// bad input is always a 4xx problem+json.
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
let doc: any;
let realIds: Record<string, string>;

beforeAll(async () => {
  t = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: "false" });
  doc = (await t.request("GET", "/openapi.json", { token: null })).body;
  const app = await t.request("POST", "/applications", { body: { name: "fuzz-target" } });
  const report = {
    bomFormat: "CycloneDX",
    specVersion: "1.6",
    components: [
      { type: "library", "bom-ref": "c", name: "lodash", version: "4.17.20", purl: "pkg:npm/lodash@4.17.20" },
    ],
    vulnerabilities: [{ id: "CVE-2021-23337", ratings: [{ severity: "high" }], affects: [{ ref: "c" }] }],
  };
  await t.request("POST", `/applications/${app.body.id}/scan-reports`, {
    rawBody: JSON.stringify(report),
    headers: { "content-type": "application/json" },
  });
  const vulnerability = (await t.request("GET", `/applications/${app.body.id}/vulnerabilities`)).body[0];
  realIds = { id: app.body.id, vulnerabilityId: vulnerability.id };
});
afterAll(() => t.close());

const WEIRD_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  1e308,
  -0,
  "",
  " ",
  "x".repeat(5000),
  "💥\u0000\uFFFF",
  "' OR 1=1 --",
  "../../etc/passwd",
  "<script>alert(1)</script>",
  [],
  [null],
  [1, 2],
  ["a", "a"],
  {},
  { $gt: "" },
  { __proto__: { admin: true } },
];

const WEIRD_IDS = [
  "x",
  "0",
  "-1",
  "null",
  "undefined",
  "%00",
  "..%2F..%2F",
  "%27%20OR%201%3D1",
  "💥",
  "a".repeat(3000),
  "00000000-0000-0000-0000-000000000000",
  "0190a8c6-0000-7000-8000-000000000000",
  "0190A8C6-0000-7000-8000-00000000000Z",
  "%E0%A4%A",
  "{id}",
  "1e309",
  "ffffffff-ffff-ffff-ffff-ffffffffffff",
];

const RAW_BODIES = [
  "",
  "{",
  "}",
  "[",
  "null",
  "true",
  "1",
  '"text"',
  "[]",
  "{}",
  '{"a":}',
  "{'a':1}",
  "\u0000",
  "\uFEFF{}",
  '{"name":"x",}',
  "[".repeat(20_000) + "]".repeat(20_000),
  '{"a":' + "1".repeat(400) + "}",
  JSON.stringify({ name: "x".repeat(300) }),
  '{"__proto__":{"admin":true},"name":"p"}',
  '{"constructor":{"prototype":{"x":1}}}',
];

const QUERIES = [
  "limit=0",
  "limit=-5",
  "limit=abc",
  "limit=1e3",
  "limit=99999999999999999999",
  "limit=1&limit=2",
  "cursor=",
  "cursor=%FF%FE",
  "cursor=eyJ4Ijp9",
  "cursor=WyJub3QtYS1kYXRlIiwieCJd",
  `cursor=${Buffer.from(JSON.stringify(["+275760-09-13T00:00:00.000Z", "0190a8c6-0000-7000-8000-000000000000"])).toString("base64url")}`,
  `cursor=${Buffer.from(JSON.stringify(["0000-01-01T00:00:00.000Z", "0190a8c6-0000-7000-8000-000000000000"])).toString("base64url")}`,
  "owner=%00",
  "criticality[]=x",
  "tag=&tag=",
  "severity=HIGH",
  "status=open&status=closed",
  "severity=",
  "__proto__=x",
  "constructor[prototype][x]=1",
  "%=%",
  "a".repeat(4000) + "=1",
  "waitSeconds=31",
  "waitSeconds=-1",
  "waitSeconds=1e999",
  "waitSeconds=0x1",
  "waitSeconds=%00",
  "leaseId=x",
  "leaseId=%FF",
];

interface Operation {
  method: string;
  path: string;
  body: boolean;
  fields: string[];
}

function operations(): Operation[] {
  return Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => {
      const schema = op.requestBody?.content?.["application/json"]?.schema;
      const resolved = schema?.$ref ? doc.components.schemas[schema.$ref.split("/").pop()] : schema;
      return {
        method: method.toUpperCase(),
        path,
        body: Boolean(op.requestBody),
        fields: Object.keys(resolved?.properties ?? {}),
      };
    }),
  );
}

const fill = (path: string, value: (name: string) => string) => path.replace(/\{(\w+)\}/g, (_m, name) => value(name));

async function expectNo5xx(label: string, res: Promise<{ status: number; headers: Headers }>, seen: string[]) {
  const { status, headers } = await res;
  if (status >= 500) seen.push(`${label} → ${status}`);
  if (status >= 400 && !(headers.get("content-type") ?? "").startsWith("application/problem+json")) {
    seen.push(`${label} → ${status} without problem+json`);
  }
}

it("answers every malformed request with a 4xx problem, never a 5xx", async () => {
  const failures: string[] = [];
  let sent = 0;
  const send = async (label: string, method: string, path: string, options: Parameters<TestApp["request"]>[2] = {}) => {
    sent++;
    await expectNo5xx(label, t.request(method, path, options), failures);
  };

  for (const op of operations()) {
    const realPath = fill(op.path, (name) => realIds[name] ?? realIds.id!);
    for (const id of WEIRD_IDS)
      await send(
        `${op.method} ${op.path} id=${id.slice(0, 20)}`,
        op.method,
        fill(op.path, () => id),
        op.body ? { body: {} } : {},
      );
    for (const q of QUERIES)
      await send(
        `${op.method} ${op.path}?${q.slice(0, 30)}`,
        op.method,
        `${realPath}?${q}`,
        op.body ? { body: {} } : {},
      );
    if (!op.body) continue;
    for (const raw of RAW_BODIES) {
      await send(`${op.method} ${op.path} raw=${raw.slice(0, 20)}`, op.method, realPath, {
        rawBody: raw,
        headers: { "content-type": "application/json" },
      });
    }
    for (const type of [
      "text/plain",
      "application/xml",
      "application/json; charset=latin1",
      "multipart/form-data; boundary=x",
    ]) {
      await send(`${op.method} ${op.path} type=${type}`, op.method, realPath, {
        rawBody: "{}",
        headers: { "content-type": type },
      });
    }
    for (const field of op.fields) {
      for (const value of WEIRD_VALUES) {
        await send(`${op.method} ${op.path} ${field}=${JSON.stringify(value)?.slice(0, 20)}`, op.method, realPath, {
          body: { [field]: value },
        });
      }
    }
    for (const value of WEIRD_VALUES) {
      await send(`${op.method} ${op.path} body=${JSON.stringify(value)?.slice(0, 20)}`, op.method, realPath, {
        body: value,
      });
    }
  }

  expect(failures).toEqual([]);
  expect(sent).toBeGreaterThan(500);
}, 120_000);
