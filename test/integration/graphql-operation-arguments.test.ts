// Every query and mutation that takes arguments, walked from the schema, answers the same whether
// each argument is written in the document or passed as a variable (enums, lists of enums, input
// objects holding enums, IDs, strings, cursors, dates, JSON): queries run compiled (graphql-jit),
// mutations on graphql-js, and a client's generated documents send the variable form (issue 59).
import { getNamedType, getNullableType, isListType, type GraphQLField } from "graphql";
import { fanOutEvents } from "../../src/dispatcher/fan-out.ts";
import { AUDIT_EVENT_TYPES, EVENT_TYPES } from "../../src/events/catalog.ts";
import { schema } from "../../src/graphql/schema.ts";
import { createEngines } from "../../src/scans/engines/create-engines.ts";
import { createScanRunner, type ScanRunner } from "../../src/scans/scan-runner.ts";
import { gql } from "../helpers/graphql.ts";
import { fieldsWithArguments, sampleValue, variantsOf, type Pick } from "../helpers/graphql-arguments.ts";
import { finding, scriptedEngine } from "../helpers/scan-engines.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
let runner: ScanRunner;
beforeAll(async () => {
  t = await startTestApp({ SCAN_DURATION_MS: "0" });
  // The same findings in every world, so that worlds answer alike where they are compared.
  const sca = {
    ...finding("dependency", "high"),
    cve: "CVE-2026-0059",
    packageName: "left-pad",
    packageVersion: "1.0.0",
  };
  runner = createScanRunner({
    db: t.app.db.prisma,
    engines: createEngines({
      durationMs: 0,
      overrides: {
        sast: scriptedEngine("sast", () => (["critical", "high", "medium", "low"] as const).map((s) => finding(s, s))),
        sca: scriptedEngine("sca", () => [sca, finding("transitive", "medium")]),
      },
    }),
    log: t.app.log,
    leaseMs: 30_000,
  });
});
afterAll(() => t.close());

/** What the sample arguments name: rows made through REST, all of them carrying the world's tag. */
interface World {
  tag: string;
  /** By what they are: application, policy, webhook, delivery. */
  ids: Record<string, string>;
  /** A vulnerability's tool, so that a filter on it keeps something. */
  tool: string;
  /** Before anything in the world was made. */
  since: string;
  /** A moment a day after the world was made: when its decisions that expire end. */
  until: string;
  /** A CycloneDX VEX about one of the application's vulnerabilities. */
  vex: Record<string, unknown>;
}

let worlds = 0;

async function made(path: string, body: unknown): Promise<string> {
  const res = await t.request("POST", path, { body });
  if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${res.text}`);
  return res.body.id;
}

/**
 * Applications (`applications` matching the sample filter, then one that does not), each scanned
 * twice, with `count` policies and webhooks, the webhooks' deliveries, and every event numbered.
 */
async function newWorld(count = 1): Promise<World> {
  const tag = `w${++worlds}z`;
  const since = new Date(Date.now() - 1000).toISOString();
  const until = new Date(Date.now() + 86_400_000).toISOString();
  const ids: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    const webhook = await made("/webhooks", {
      name: `hook-${tag}-${i}`,
      url: `https://hooks.example.com/${tag}/${i}`,
      // The audit trail's aside: each world's own changes would reach the worlds' hooks made before.
      events: EVENT_TYPES.filter((type) => !(AUDIT_EVENT_TYPES as readonly string[]).includes(type)),
      secret: `secret-${tag}`,
    });
    ids.webhook ??= webhook;
  }
  const applications: string[] = [];
  for (let i = 0; i <= count; i++) {
    applications.push(
      await made("/applications", {
        name: `app-${tag}-${i}`,
        owner: `sample-${tag}`,
        tags: [`sample-${tag}`, "other"],
        // The sample filter's criticality (the enum's second value, HIGH); the last one's differs.
        criticality: i < count ? "high" : "low",
        repoUrl: `https://hooks.example.com/${tag}/repo`,
        serviceUrl: `https://hooks.example.com/${tag}/service`,
      }),
    );
  }
  ids.application = applications[0]!;
  for (const app of applications)
    for (const scanType of ["sast", "sca"]) await made(`/applications/${app}/scans`, { scanType });
  while ((await runner.runOnce()) > 0);
  for (let i = 0; i < count; i++) {
    const policy = await made("/policies", {
      name: `policy-${tag}-${i}`,
      action: "block",
      conditions: { applicationIds: [ids.application], vulnerabilitySeverity: "high" },
    });
    ids.policy ??= policy;
  }
  while ((await fanOutEvents(t.app.db.pool, 500)).length > 0);
  // Given up, as after a receiver's long outage: what recoverWebhookDeliveries sends again.
  await t.app.db.prisma.webhookDelivery.updateMany({ where: { webhookId: ids.webhook }, data: { status: "failed" } });
  // Deliveries made in one transaction share createdAt, and their ids are random: pick by what they carry.
  const deliveries = await t.request("GET", `/webhooks/${ids.webhook}/deliveries?limit=500`);
  ids.delivery = deliveries.body.find((d: { eventType: string }) => d.eventType === "scan.completed").id;
  const vulnerabilities = (await t.request("GET", `/applications/${ids.application}/vulnerabilities?limit=500`)).body;
  const high = vulnerabilities.find((v: { cve: string | null }) => v.cve);
  return {
    tag,
    ids,
    tool: high.tool,
    since,
    until,
    vex: {
      bomFormat: "CycloneDX",
      specVersion: "1.6",
      version: 1,
      vulnerabilities: [
        {
          id: high.cve,
          analysis: { state: "not_affected", justification: "code_not_reachable", detail: `triaged in ${tag}` },
        },
      ],
    },
  };
}

/** The root field an argument belongs to ("Mutation.updatePolicy.id" → "updatePolicy"), and what it is about. */
const entityOf = (field: string) => {
  const noun = field.replace(/^(create|update|delete)/, "");
  return noun[0]!.toLowerCase() + noun.slice(1);
};

/** The world's value for each argument and input field the type alone cannot give one. */
function picker(world: World, cursors: Record<string, string> = {}): Pick {
  return (at, type) => {
    if (isListType(getNullableType(type))) return undefined; // one item picked, the list made by sampleValue
    const path = at.split(".");
    const name = path.at(-1)!;
    const named = getNamedType(type).name;
    if (named === "ID") {
      const entity = name === "id" ? entityOf(path.at(-2)!) : name.replace(/Ids?$/, "");
      const id = world.ids[entity];
      if (!id) throw new Error(`No ${entity} in the world for ${at}`);
      return id;
    }
    if (name === "after") {
      const cursor = cursors[path.slice(0, -1).join(".")];
      if (!cursor) throw new Error(`No cursor for ${at}`);
      return cursor;
    }
    if (at.endsWith("remediationMetrics.to")) return world.until; // a period: after `from`
    if (named === "DateTime") return world.since;
    if (name === "expiresAt") return world.until;
    if (named === "JSON") return world.vex;
    if (at === "VulnerabilityFilter.tool") return world.tool;
    // What the world's scans left: open vulnerabilities; and a scan that needs no running site.
    if (at === "VulnerabilityFilter.status") return "OPEN";
    if (at === "TriggerScanInput.scanType") return "SAST";
    if (named === "String")
      return /url$/i.test(name) ? `https://hooks.example.com/${world.tag}/new` : `sample-${world.tag}`;
    return undefined;
  };
}

const argumentsOf = (root: string, field: GraphQLField<unknown, unknown>, pick: Pick) =>
  Object.fromEntries(field.args.map((a) => [a.name, sampleValue(`${root}.${field.name}.${a.name}`, a.type, pick)]));

describe("queries", () => {
  let world: World;
  const cursors: Record<string, string> = {};
  beforeAll(async () => {
    world = await newWorld(3);
    // `after`: the end of each connection's first page.
    for (const field of fieldsWithArguments(schema.getQueryType()!)) {
      if (!field.args.some((a) => a.name === "after")) continue;
      const res = await gql(t, `{ ${field.name}(first: 1) { pageInfo { endCursor } } }`);
      expect(res.body.errors).toBeUndefined();
      cursors[`Query.${field.name}`] = res.body.data[field.name].pageInfo.endCursor;
    }
  });

  it.each(fieldsWithArguments(schema.getQueryType()!).map((f) => [f.name, f] as const))(
    "%s answers the same with each argument inline or a variable",
    async (name, field) => {
      const variants = variantsOf("query", field, argumentsOf("Query", field, picker(world, cursors)));
      const answers = [];
      for (const variant of variants)
        answers.push({ variant: variant.label, ...(await gql(t, variant.query, variant.variables)).body });
      const [inline] = answers;
      expect(inline!.errors).toBeUndefined();
      expect(inline!.data[name]).toBeTruthy();
      // The sample arguments keep something: the page is not empty.
      if ("edges" in inline!.data[name]) expect(inline!.data[name].edges.length).toBeGreaterThan(0);
      for (const answer of answers.slice(1)) expect(answer).toEqual({ ...inline, variant: answer.variant });
    },
  );
});

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const ISO_TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g;

/** An answer with what differs from world to world named: its rows by role, new ids by order, times, the tag. */
function normalized(answer: unknown, world: World): unknown {
  const roles = new Map(Object.entries(world.ids).map(([role, id]) => [id, `<${role}>`]));
  const fresh = new Map<string, string>();
  const text = (s: string) =>
    s
      .replace(
        UUID,
        (id) => roles.get(id) ?? fresh.get(id) ?? (fresh.set(id, `<new ${fresh.size + 1}>`), fresh.get(id)!),
      )
      .replace(ISO_TIME, "<time>")
      .split(world.tag)
      .join("<tag>");
  const walk = (v: unknown): unknown =>
    typeof v === "string"
      ? text(v)
      : Array.isArray(v)
        ? v.map(walk)
        : v && typeof v === "object"
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]))
          : v;
  return walk(answer);
}

describe("mutations", () => {
  it.each(fieldsWithArguments(schema.getMutationType()!).map((f) => [f.name, f] as const))(
    "%s answers the same with each argument inline or a variable, each in a world of its own",
    async (name, field) => {
      const answers = [];
      // Every variant changes what it is given: each gets its own world, and answers compare by role.
      for (let i = 0; ; i++) {
        const world = await newWorld();
        const variants = variantsOf("mutation", field, argumentsOf("Mutation", field, picker(world)));
        const variant = variants[i]!;
        const { body } = await gql(t, variant.query, variant.variables);
        answers.push({ variant: variant.label, ...(normalized(body, world) as object) });
        if (i === variants.length - 1) break;
      }
      const [inline] = answers as { errors?: unknown; data?: Record<string, unknown> }[];
      expect(inline!.errors).toBeUndefined();
      expect(inline!.data![name]).toBeTruthy();
      for (const answer of answers.slice(1)) expect(answer).toEqual({ ...inline, variant: answer.variant });
    },
  );
});
