// What the API document promises about request bodies, held to by the service: every body the
// document allows is taken (no 400), and a body it forbids, one rule broken at a time, is refused
// with 400. Bodies are generated from the live /openapi.json (test/helpers/schema-arbitrary.ts), so
// a rule the document adds or drops is checked without this file changing. The seed is fixed.
import fc from "fast-check";
import { allowedBy, forbiddenBy, type Schema } from "../helpers/schema-arbitrary.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

const SEED = 20_261_203;
const RUNS = 40;

let t: TestApp;
let doc: Schema;
const ids: { applications: string[]; policy?: string; webhook?: string } = { applications: [] };

beforeAll(async () => {
  t = await startTestApp();
  doc = (await t.request("GET", "/openapi.json", { token: null })).body;
  for (const name of ["document-a", "document-b"]) {
    ids.applications.push((await t.request("POST", "/applications", { body: { name } })).body.id);
  }
  ids.policy = (await t.request("POST", "/policies", { body: { name: "document-policy", action: "monitor" } })).body.id;
  ids.webhook = (
    await t.request("POST", "/webhooks", {
      body: {
        name: "document-hook",
        url: "https://hooks.example.com/a",
        events: ["scan.completed"],
        secret: "s3cret-value",
      },
    })
  ).body.id;
}, 60_000);
afterAll(() => t?.close());

interface Case {
  method: "POST" | "PUT";
  template: string;
  path: () => string;
  /** What the document says in prose only (ids that must exist), as arbitraries. */
  overrides?: () => Record<string, fc.Arbitrary<unknown>>;
  /** Answers other than 400 the document declares for an allowed body (a name already taken). */
  also?: number[];
}

const CASES: Case[] = [
  { method: "POST", template: "/applications", path: () => "/applications", also: [409] },
  { method: "PUT", template: "/applications/{id}", path: () => `/applications/${ids.applications[0]}`, also: [409] },
  {
    method: "POST",
    template: "/applications/{id}/scans",
    path: () => `/applications/${ids.applications[1]}/scans`,
    also: [409], // a scan of that type already queued or running
  },
  {
    method: "POST",
    template: "/policies",
    path: () => "/policies",
    overrides: () => ({ "conditions.applicationIds[]": fc.constantFrom(...ids.applications) }),
    also: [409],
  },
  {
    method: "PUT",
    template: "/policies/{id}",
    path: () => `/policies/${ids.policy}`,
    overrides: () => ({ "conditions.applicationIds[]": fc.constantFrom(...ids.applications) }),
    also: [409],
  },
  { method: "POST", template: "/webhooks", path: () => "/webhooks" },
  { method: "PUT", template: "/webhooks/{id}", path: () => `/webhooks/${ids.webhook}` },
  { method: "PUT", template: "/sla", path: () => "/sla" },
];

const bodySchema = (c: Case): Schema =>
  doc.paths[c.template][c.method.toLowerCase()].requestBody.content["application/json"].schema;

const shown = (res: { status: number; text: string }) => `${res.status} ${res.text.slice(0, 400)}`;

describe.each(CASES)("$method $template", (c) => {
  it("takes every body the document allows", async () => {
    const bodies = allowedBy(bodySchema(c), { doc, overrides: c.overrides?.() });
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        const res = await t.request(c.method, c.path(), { body });
        if (res.status >= 400 && !c.also?.includes(res.status)) {
          throw new Error(`${c.method} ${c.path()} ${JSON.stringify(body)} answered ${shown(res)}`);
        }
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  });

  it("refuses with 400 a body that breaks one rule of the document", async () => {
    const [valid] = fc.sample(allowedBy(bodySchema(c), { doc, overrides: c.overrides?.() }), {
      seed: SEED,
      numRuns: 1,
    });
    const broken = forbiddenBy(bodySchema(c), valid as Record<string, unknown>, doc);
    expect(broken.length).toBeGreaterThan(0);
    const accepted: string[] = [];
    for (const [rule, body] of broken) {
      const res = await t.request(c.method, c.path(), { body });
      if (res.status !== 400) accepted.push(`${rule}: ${shown(res)}`);
    }
    expect(accepted).toEqual([]);
  });
});

/** The rule their descriptions state for `from`: before `to`, which defaults to now. */
const fromBeforeTo = (q: Record<string, string>) =>
  q.from === undefined || Date.parse(q.from) < (q.to === undefined ? Date.now() : Date.parse(q.to));

const BUCKET_HOURS: Record<string, number> = { hour: 1, day: 24, week: 168 };
/** And the trend's: the range holds at most 366 points of its bucket (from defaults to 30 days before `to`). */
const atMost366Points = (q: Record<string, string>) => {
  const to = q.to === undefined ? Date.now() : Date.parse(q.to);
  const from = q.from === undefined ? to - 30 * 86_400_000 : Date.parse(q.from);
  return fromBeforeTo(q) && (to - from) / 3_600_000 / BUCKET_HOURS[q.bucket ?? "day"]! <= 366;
};

/** Operations that read, with the query parameters the document describes (cursors are opaque: not made up). */
const QUERIES: {
  template: string;
  path: () => string;
  prose?: (q: Record<string, string>) => boolean;
  also?: number[];
}[] = [
  { template: "/applications", path: () => "/applications" },
  { template: "/applications/{id}/scans", path: () => `/applications/${ids.applications[0]}/scans` },
  {
    template: "/applications/{id}/vulnerabilities",
    path: () => `/applications/${ids.applications[0]}/vulnerabilities`,
  },
  {
    template: "/applications/{id}/vulnerability-trend",
    path: () => `/applications/${ids.applications[0]}/vulnerability-trend`,
    prose: atMost366Points,
  },
  // An applicationId that names none is 404, as declared.
  { template: "/remediation-metrics", path: () => "/remediation-metrics", prose: fromBeforeTo, also: [404] },
  { template: "/policies", path: () => "/policies" },
  { template: "/webhooks", path: () => "/webhooks" },
  { template: "/events", path: () => "/events" },
];
const OPAQUE = new Set(["cursor", "after"]);

describe.each(QUERIES)("GET $template", (q) => {
  it("takes every query the document allows", async () => {
    const parameters = (doc.paths[q.template].get.parameters as { name: string; in: string; schema: Schema }[]).filter(
      (p) => p.in === "query" && !OPAQUE.has(p.name),
    );
    const queries = fc.record(
      Object.fromEntries(parameters.map((p) => [p.name, allowedBy(p.schema, { doc }).map(String)])),
      { requiredKeys: [] },
    ) as fc.Arbitrary<Record<string, string>>;
    await fc.assert(
      fc.asyncProperty(q.prose ? queries.filter(q.prose) : queries, async (query) => {
        const url = `${q.path()}?${new URLSearchParams(query)}`;
        const res = await t.request("GET", url);
        if (res.status >= 400 && !q.also?.includes(res.status)) throw new Error(`GET ${url} answered ${shown(res)}`);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  });
});

it("answers an instant RFC 3339 writes but Postgres has not (year 0000) with 400, and clamps a default before year 1", async () => {
  const trend = `/applications/${ids.applications[0]}/vulnerability-trend`;
  const zero = await t.request("GET", `${trend}?to=0000-06-01T00:00:00Z`);
  expect(zero.status).toBe(400);
  expect(zero.body.errors).toEqual([{ path: "to", message: expect.stringContaining("0001-01-01") }]);
  const early = await t.request("GET", `${trend}?to=0001-01-05T00:00:00Z`);
  expect(early.status).toBe(200);
  expect(early.body.from).toBe("0001-01-01T00:00:00.000Z");
  expect((await t.request("GET", "/remediation-metrics?to=0001-01-05T00:00:00Z")).status).toBe(200);
});
