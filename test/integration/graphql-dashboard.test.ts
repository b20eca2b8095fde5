// The dashboard view: scans and vulnerabilities through GraphQL, agreeing with REST, with a
// statement count that does not grow with the number of applications.
import { getNamedType, GraphQLEnumType, GraphQLObjectType } from "graphql";
import type { ServiceContext } from "../../src/domain/context.ts";
import { readPerApplication } from "../../src/domain/per-application.ts";
import { latestScans, scanPages } from "../../src/domain/scans/scans-per-application.ts";
import { vulnerabilityPages } from "../../src/domain/vulnerabilities/vulnerabilities-per-application.ts";
import { schema } from "../../src/graphql/schema.ts";
import { codesOf, gql } from "../helpers/graphql.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SCAN_DURATION_MS: "0" });
});
afterAll(() => t.close());

let n = 0;
async function newApplication(): Promise<string> {
  const res = await t.request("POST", "/applications", { body: { name: `dash-${++n}` } });
  expect(res.status).toBe(201);
  return res.body.id;
}
const drain = async () => {
  while ((await t.app.scanRunner.runOnce()) > 0);
};
const TRIGGER = `mutation($app: ID!, $input: TriggerScanInput!) { triggerScan(applicationId: $app, input: $input) { id applicationId scanType status triggeredBy createdAt } }`;

/** Applications with both scan types completed. */
async function seed(count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = await newApplication();
    ids.push(id);
    for (const scanType of ["SAST", "SCA"]) {
      const res = await gql(t, TRIGGER, { app: id, input: { scanType } });
      expect(res.body.errors).toBeUndefined();
    }
  }
  await drain();
  return ids;
}

/** Counts the SQL statements sent through the pool while `run` runs. */
async function countStatements(run: () => Promise<unknown>): Promise<number> {
  const pool = t.app.db.pool;
  const original = pool.query;
  let statements = 0;
  pool.query = function (this: typeof pool, ...args: unknown[]) {
    statements++;
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof pool.query;
  try {
    await run();
  } finally {
    pool.query = original;
  }
  return statements;
}

const DASHBOARD = `query($first: Int!) {
  applications(first: $first) {
    totalCount
    edges { node {
      id name
      vulnerabilityCounts { total bySeverity { critical high medium low } byStatus { open inProgress resolved accepted } unresolvedBySeverity { critical } }
      latestScans { id scanType status summary { totalFindings critical } }
      vulnerabilities(first: 10) { totalCount edges { node { id severity status title } } }
    } }
  }
}`;

describe("GraphQL scans and vulnerabilities", () => {
  it("triggers a scan through GraphQL with REST's rules (CONFLICT while one is active) and reads it through REST", async () => {
    const app = await newApplication();
    const res = await gql(t, TRIGGER, { app, input: { scanType: "DAST", triggeredBy: "ci" } });
    const scan = res.body.data.triggerScan;
    expect(scan).toMatchObject({ applicationId: app, scanType: "DAST", status: "QUEUED", triggeredBy: "ci" });
    expect(codesOf(await gql(t, TRIGGER, { app, input: { scanType: "DAST" } }))).toEqual(["CONFLICT"]);
    expect(codesOf(await gql(t, TRIGGER, { app: "nope", input: { scanType: "DAST" } }))).toEqual(["NOT_FOUND"]);
    const writeless = await t.token(["scans:read"]);
    expect(codesOf(await gql(t, TRIGGER, { app, input: { scanType: "SCA" } }, { token: writeless }))).toEqual([
      "FORBIDDEN",
    ]);
    const rest = await t.request("GET", `/applications/${app}/scans/${scan.id}`);
    expect(rest.body).toMatchObject({ id: scan.id, scanType: "dast", status: "queued", createdAt: scan.createdAt });
    await drain();
  });

  it("shows the same vulnerabilities, counts and scans as REST", async () => {
    const [app] = await seed(1);
    const restVulns = (await t.request("GET", `/applications/${app}/vulnerabilities?limit=500`)).body;
    const restScans = (await t.request("GET", `/applications/${app}/scans`)).body;
    expect(restVulns.length).toBeGreaterThan(0);
    const res = await gql(
      t,
      `query($id: ID!) { application(id: $id) {
        vulnerabilityCounts { total bySeverity { critical high medium low } }
        latestScans { id status }
        scans(first: 500) { totalCount edges { node { id } } }
        vulnerabilities(first: 500) { totalCount edges { node { id severity cvssScore cwe application { id } } } }
        high: vulnerabilities(filter: { severity: HIGH }) { totalCount }
      } }`,
      { id: app },
    );
    expect(res.body.errors).toBeUndefined();
    const a = res.body.data.application;
    expect(a.vulnerabilities.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(
      restVulns.map((v: { id: string }) => v.id),
    );
    expect(a.vulnerabilities.totalCount).toBe(restVulns.length);
    expect(a.vulnerabilities.edges[0].node.application.id).toBe(app);
    expect(a.vulnerabilities.edges[0].node.cvssScore).toBe(restVulns[0].cvssScore);
    expect(a.vulnerabilityCounts.total).toBe(restVulns.length);
    for (const s of ["critical", "high", "medium", "low"]) {
      expect(a.vulnerabilityCounts.bySeverity[s]).toBe(
        restVulns.filter((v: { severity: string }) => v.severity === s).length,
      );
    }
    expect(a.high.totalCount).toBe(a.vulnerabilityCounts.bySeverity.high);
    expect(a.scans.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(
      restScans.map((s: { id: string }) => s.id),
    );
    expect(a.latestScans.map((s: { id: string }) => s.id).sort()).toEqual(
      restScans.map((s: { id: string }) => s.id).sort(),
    );
    expect(a.latestScans.every((s: { status: string }) => s.status === "COMPLETED")).toBe(true);

    const top = await gql(
      t,
      `query($f: VulnerabilityFilter) { vulnerabilities(filter: $f, first: 500) { totalCount edges { node { id } } } }`,
      {
        f: { applicationId: app },
      },
    );
    expect(top.body.data.vulnerabilities.totalCount).toBe(restVulns.length);
  });

  it("needs vulnerabilities:read for vulnerability fields and rejects bad filters like REST", async () => {
    const scansOnly = await t.token(["applications:read", "scans:read"]);
    const res = await gql(
      t,
      `{ applications(first: 1) { edges { node { vulnerabilityCounts { total } } } } }`,
      undefined,
      { token: scansOnly },
    );
    expect(codesOf(res)).toContain("FORBIDDEN");
    const top = await gql(t, `{ vulnerabilities { totalCount } }`, undefined, { token: scansOnly });
    expect(codesOf(top)).toEqual(["FORBIDDEN"]);
    const bad = await gql(t, `{ vulnerabilities(first: 501) { totalCount } }`);
    expect(codesOf(bad)).toEqual(["BAD_USER_INPUT"]);
  });

  it("pages the cross-application list with first/after", async () => {
    const total = (await gql(t, `{ vulnerabilities { totalCount } }`)).body.data.vulnerabilities.totalCount;
    const seen = new Set<string>();
    let after: string | undefined;
    for (let i = 0; i < 100; i++) {
      const res = await gql(
        t,
        `query($after: String) { vulnerabilities(first: 7, after: $after) { pageInfo { hasNextPage endCursor } edges { node { id } } } }`,
        { after },
      );
      for (const e of res.body.data.vulnerabilities.edges) seen.add(e.node.id);
      if (!res.body.data.vulnerabilities.pageInfo.hasNextPage) break;
      after = res.body.data.vulnerabilities.pageInfo.endCursor;
    }
    expect(seen.size).toBe(total);
  });

  it("pages each application's vulnerabilities and scans with first/after, as REST pages them", async () => {
    const [app] = await seed(1);
    await gql(t, TRIGGER, { app, input: { scanType: "SAST" } });
    await drain();
    const restVulns = (await t.request("GET", `/applications/${app}/vulnerabilities?limit=500&severity=high`)).body;
    const restScans = (await t.request("GET", `/applications/${app}/scans`)).body;
    expect(restVulns.length).toBeGreaterThan(1);
    // Every page through the nested connection `field` of the application, with its totalCount.
    async function pageThrough(field: string, filter: string, total: number): Promise<string[]> {
      const ids: string[] = [];
      let after: string | null = null;
      for (let i = 0; i < 100; i++) {
        const res = await gql(
          t,
          `query($id: ID!, $after: String) { application(id: $id) {
          ${field}(first: 1, after: $after ${filter}) { totalCount pageInfo { hasNextPage endCursor } edges { node { id } } } } }`,
          { id: app, after },
        );
        expect(res.body.errors).toBeUndefined();
        const connection = res.body.data.application[field];
        expect(connection.totalCount).toBe(total);
        ids.push(...connection.edges.map((e: { node: { id: string } }) => e.node.id));
        if (!connection.pageInfo.hasNextPage) return ids;
        after = connection.pageInfo.endCursor;
      }
      throw new Error("did not reach the last page");
    }
    expect(await pageThrough("vulnerabilities", "filter: { severity: HIGH }", restVulns.length)).toEqual(
      restVulns.map((v: { id: string }) => v.id),
    );
    expect(await pageThrough("scans", "", restScans.length)).toEqual(restScans.map((s: { id: string }) => s.id));
  });

  it("reads rows per application exactly as Prisma reads them (every column, type and order)", async () => {
    const [app] = await seed(1);
    const service = {
      db: t.app.db.prisma,
      pool: t.app.db.pool,
      actor: { sub: "test", scopes: new Set(["admin"]), exp: Infinity, teams: null, orgWide: true },
    } as unknown as ServiceContext;
    const page = { limit: 500 };
    const values = await readPerApplication(
      service.pool,
      [app!],
      [vulnerabilityPages(service, {}, page), scanPages(service, page), latestScans(service)],
    );
    const [vulnPage, scanPage, latest] = [...values.values()].map((byApp) => byApp.get(app!));
    const newestFirst = [{ createdAt: "desc" as const }, { id: "desc" as const }];
    expect((vulnPage as { items: unknown[] }).items).toEqual(
      await t.app.db.prisma.vulnerability.findMany({ where: { applicationId: app }, orderBy: newestFirst }),
    );
    const prismaScans = await t.app.db.prisma.scan.findMany({ where: { applicationId: app }, orderBy: newestFirst });
    expect((scanPage as { items: unknown[] }).items).toEqual(prismaScans);
    expect(latest).toEqual([...prismaScans].sort((a, b) => a.scanType.localeCompare(b.scanType)));
    expect(prismaScans.every((s) => s.completedAt instanceof Date && s.summary !== null)).toBe(true);
  });

  it("answers every Scan and Vulnerability field under an application as REST does (no column left out)", async () => {
    const [app] = await seed(1);
    // Every field of the type, objects with every field of theirs (application with its id).
    const selectionOf = (type: GraphQLObjectType): string =>
      Object.values(type.getFields())
        // A vulnerability's history is its own REST resource (…/history), not a field of the REST view.
        .filter((f) => !(type.name === "Vulnerability" && f.name === "history"))
        .map((f) => {
          const named = getNamedType(f.type);
          if (named.name === "Application") return `${f.name} { id }`;
          return named instanceof GraphQLObjectType ? `${f.name} { ${selectionOf(named)} }` : f.name;
        })
        .join(" ");
    const scanType = schema.getType("Scan") as GraphQLObjectType;
    const vulnerabilityType = schema.getType("Vulnerability") as GraphQLObjectType;
    const res = await gql(
      t,
      `{ applications(first: 1) { edges { node { id
        latestScans { ${selectionOf(scanType)} }
        scans(first: 5) { edges { node { ${selectionOf(scanType)} } } }
        vulnerabilities(first: 50) { edges { node { ${selectionOf(vulnerabilityType)} } } }
      } } } }`,
    );
    expect(res.body.errors).toBeUndefined();
    const node = res.body.data.applications.edges[0].node;
    expect(node.id).toBe(app); // the newest
    // GraphQL's enums hold the domain's values; REST shows those.
    const toRest = (type: GraphQLObjectType, value: Record<string, unknown>): Record<string, unknown> =>
      Object.fromEntries(
        Object.entries(value).map(([name, v]) => {
          const named = getNamedType(type.getFields()[name]!.type);
          if (v !== null && named instanceof GraphQLEnumType) return [name, named.getValue(v as string)!.value];
          if (v !== null && named instanceof GraphQLObjectType && named.name !== "Application")
            return [name, toRest(named, v as Record<string, unknown>)];
          return [name, v];
        }),
      );
    const compare = (
      type: GraphQLObjectType,
      fromGraphql: Record<string, unknown>[],
      fromRest: Record<string, unknown>[],
    ) => {
      expect(fromGraphql.map((n) => n.id).sort()).toEqual(fromRest.map((r) => r.id).sort());
      for (const rest of fromRest) {
        const { application, ...fields } = toRest(
          type,
          fromGraphql.find((n) => n.id === rest.id)!,
        );
        expect(application).toEqual({ id: app });
        expect(fields).toEqual(rest);
      }
    };
    const restScans = (await t.request("GET", `/applications/${app}/scans`)).body;
    const restVulns = (await t.request("GET", `/applications/${app}/vulnerabilities?limit=500`)).body;
    expect(restVulns.length).toBeGreaterThan(0);
    expect(restVulns.length).toBeLessThanOrEqual(50); // two scans of at most 14 findings each
    compare(scanType, node.latestScans, restScans);
    compare(
      scanType,
      node.scans.edges.map((e: { node: Record<string, unknown> }) => e.node),
      restScans,
    );
    compare(
      vulnerabilityType,
      node.vulnerabilities.edges.map((e: { node: Record<string, unknown> }) => e.node),
      restVulns,
    );
  });

  it("answers the same field asked twice with different arguments under every application, each as asked", async () => {
    // The reads of a field are built once per request and shared by every application of the list:
    // two aliases of one field must not share theirs.
    const apps = (await seed(2)).reverse(); // the list is newest first
    const res = await gql(
      t,
      `{ applications(first: 2) { edges { node { id
        high: vulnerabilities(first: 1, filter: { severity: HIGH }) { totalCount pageInfo { hasNextPage } edges { node { id severity } } }
        all: vulnerabilities(first: 3) { totalCount pageInfo { hasNextPage } edges { cursor node { id } } }
      } } } }`,
    );
    expect(res.body.errors).toBeUndefined();
    const nodes = res.body.data.applications.edges.map((e: { node: unknown }) => e.node);
    expect(nodes.map((n: { id: string }) => n.id)).toEqual(apps);
    for (const [i, app] of apps.entries()) {
      const rest = (await t.request("GET", `/applications/${app}/vulnerabilities?limit=500`)).body as {
        id: string;
        severity: string;
      }[];
      const high = rest.filter((v) => v.severity === "high");
      expect(high.length).toBeGreaterThan(0);
      expect(nodes[i].high).toEqual({
        totalCount: high.length,
        pageInfo: { hasNextPage: high.length > 1 },
        edges: [{ node: { id: high[0]!.id, severity: "HIGH" } }],
      });
      expect(nodes[i].all.totalCount).toBe(rest.length);
      expect(nodes[i].all.pageInfo.hasNextPage).toBe(rest.length > 3);
      expect(nodes[i].all.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(
        rest.slice(0, 3).map((v) => v.id),
      );
      // An edge's cursor continues the list right after that edge, as REST's cursors do.
      const after = (
        await gql(
          t,
          `query($id: ID!, $after: String) { application(id: $id) { vulnerabilities(first: 1, after: $after) { edges { node { id } } } } }`,
          {
            id: app,
            after: nodes[i].all.edges[0].cursor,
          },
        )
      ).body.data.application.vulnerabilities.edges;
      expect(after.map((e: { node: { id: string } }) => e.node.id)).toEqual([rest[1]!.id]);
    }
  });

  it("runs at most 3 SQL statements for 5 or 500 applications (no N+1)", async () => {
    const fresh = await startTestApp({ SCAN_DURATION_MS: "0" });
    const saved = t;
    t = fresh;
    try {
      await seed(5);
      const five = await countStatements(async () => {
        const res = await gql(t, DASHBOARD, { first: 500 });
        expect(res.body.errors).toBeUndefined();
        expect(res.body.data.applications.edges).toHaveLength(5);
        expect(res.body.data.applications.edges[0].node.latestScans).toHaveLength(2);
      });
      // 495 more, every tenth scanned: the statements do not depend on what the applications hold.
      for (let i = 0; i < 495; i++) {
        if (i % 10 === 0) await seed(1);
        else await newApplication();
      }
      const many = await countStatements(async () => {
        const res = await gql(t, DASHBOARD, { first: 500 });
        expect(res.body.errors).toBeUndefined();
        const nodes = res.body.data.applications.edges.map((e: { node: unknown }) => e.node);
        expect(nodes).toHaveLength(500);
        expect(res.body.data.applications.totalCount).toBe(500);
        expect(nodes.filter((n: { latestScans: unknown[] }) => n.latestScans.length === 2)).toHaveLength(55);
        for (const n of nodes) {
          expect(n.vulnerabilities.edges.length).toBe(Math.min(10, n.vulnerabilities.totalCount));
          expect(n.vulnerabilityCounts.total).toBe(n.vulnerabilities.totalCount);
          expect(n.latestScans.length === 2).toBe(n.vulnerabilityCounts.total > 0);
        }
      });
      expect(five).toBeLessThanOrEqual(3);
      expect(many).toBe(five);
    } finally {
      t = saved;
      await fresh.close();
    }
  });
});
