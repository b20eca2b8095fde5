// The compiled service as production runs it behind PgBouncer in transaction mode: DATABASE_URL
// through the pooler, DATABASE_DIRECT_URL to the server. Two instances started together on an empty
// database migrate it once (under the migrations' lock, on their direct connections), then answer
// what failed through a pooler before (vulnerability lists, GraphQL application(id) and
// updateApplication) and carry the change to a webhook and to a subscriber on the other instance.
import type { Client } from "graphql-ws";
import pg from "pg";
import { mintToken } from "../../src/auth/mint-token.ts";
import { createTestDatabase, poolerTransactions, type TestDatabase } from "../helpers/database.ts";
import { startHttpsReceiver, type HttpsReceiver } from "../helpers/https-receiver.ts";
import { eventually } from "../helpers/scan-engines.ts";
import { cyclonedxReport } from "../helpers/vex-documents.ts";
import { createSelfSignedCert, type SelfSignedCert } from "../helpers/self-signed-cert.ts";
import { collect, wsClient } from "../helpers/graphql.ts";
import { callService, startServiceProcess, type ServiceProcess } from "../helpers/service-process.ts";
import { TEST_JWT_SECRET, TEST_WEBHOOK_SECRET_KEYS } from "../helpers/test-app.ts";

let testDb: TestDatabase;
let cert: SelfSignedCert;
let receiver: HttpsReceiver;
let services: ServiceProcess[] = [];
let subscriber: Client | undefined;
let token: string;

beforeAll(async () => {
  testDb = await createTestDatabase({ migrated: false });
  cert = createSelfSignedCert();
  receiver = await startHttpsReceiver(cert);
  token = await mintToken({ secret: TEST_JWT_SECRET, sub: "operator", scopes: ["admin"] });
});

afterAll(async () => {
  await subscriber?.dispose();
  for (const s of services) s.child.kill("SIGTERM");
  await Promise.all(services.map((s) => s.exited));
  await receiver.close();
  await testDb.drop();
  cert.remove();
});

const call = (service: ServiceProcess, method: string, path: string, body?: unknown) =>
  callService(service, token, method, path, body);

const graphql = (service: ServiceProcess, query: string, variables: Record<string, unknown> = {}) =>
  call(service, "POST", "/graphql", { query, variables });

it("migrates once, serves the doors, and carries a change to a webhook and another instance's subscriber", async () => {
  // Only DATABASE_URL and DATABASE_DIRECT_URL: DATABASE_POOL_MODE follows (transaction).
  expect(Object.keys(testDb.env).sort()).toEqual(["DATABASE_DIRECT_URL", "DATABASE_POOL_MODE", "DATABASE_URL"]);
  const env = {
    DATABASE_URL: testDb.url,
    DATABASE_DIRECT_URL: testDb.directUrl,
    NODE_ENV: "test",
    AUTH_JWT_SECRET: TEST_JWT_SECRET,
    WEBHOOK_SECRET_KEYS: TEST_WEBHOOK_SECRET_KEYS,
    NODE_EXTRA_CA_CERTS: cert.certPath,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
    LOG_LEVEL: "warn",
  };
  services = await Promise.all([startServiceProcess({ env }), startServiceProcess({ env })]);
  const [a, b] = services as [ServiceProcess, ServiceProcess];

  const hook = await call(a, "POST", "/webhooks", {
    name: "changes",
    url: receiver.url("/changes"),
    events: ["application.updated"],
    secret: "changes-secret",
  });
  expect(hook.status).toBe(201);
  const app = await call(a, "POST", "/applications", { name: "payments", criticality: "high" });
  expect(app.status).toBe(201);
  const report = await call(
    b,
    "POST",
    `/applications/${app.body.id}/scan-reports`,
    cyclonedxReport([{ id: "CVE-2021-23337", purl: "pkg:npm/lodash@4.17.20", severity: "high" }]),
  );
  expect(report.status).toBe(202);
  for (const s of services) {
    const listed = await call(s, "GET", `/applications/${app.body.id}/vulnerabilities`);
    expect(listed.status).toBe(200);
    expect(listed.body.map((v: { severity: string }) => v.severity)).toEqual(["high"]);
    const read = await graphql(
      s,
      "query ($id: ID!) { application(id: $id) { name vulnerabilityCounts { bySeverity { high } } } }",
      {
        id: app.body.id,
      },
    );
    expect(read.body).toEqual({
      data: { application: { name: "payments", vulnerabilityCounts: { bySeverity: { high: 1 } } } },
    });
  }

  // A subscriber on b, from the log's head; the change made on a.
  const head = await graphql(b, "{ eventLogHead }");
  subscriber = wsClient(b, { authorization: `Bearer ${token}` });
  const { received, errors } = collect(
    subscriber,
    {
      query: "subscription ($after: String) { events(types: [APPLICATION_UPDATED], after: $after) { eventId } }",
      variables: { after: head.body.data.eventLogHead },
    },
    (data) => data.events.eventId as string,
  );
  const updated = await graphql(
    a,
    'mutation ($id: ID!) { updateApplication(id: $id, input: { owner: "team-pay" }) { owner } }',
    { id: app.body.id },
  );
  expect(updated.body).toEqual({ data: { updateApplication: { owner: "team-pay" } } });

  await receiver.waitFor((reqs) => reqs.some((r) => r.path === "/changes"), 15_000);
  const [delivery] = receiver.requests.filter((r) => r.path === "/changes");
  const eventId = JSON.parse(delivery!.rawBody.toString()).eventId as string;
  await eventually(async () => received.length > 0 || errors.length > 0, 10_000);
  expect(errors).toEqual([]);
  expect(received).toEqual([eventId]);

  // Migrated once, and the service's statements went through PgBouncer.
  const direct = new pg.Client({ connectionString: testDb.directUrl });
  await direct.connect();
  const { rows } = await direct
    .query('SELECT migration_name FROM "_prisma_migrations" GROUP BY migration_name HAVING count(*) > 1')
    .finally(() => direct.end());
  expect(rows).toEqual([]);
  expect(await poolerTransactions(testDb)).toBeGreaterThan(10);
  for (const s of services) expect(s.logs().filter((l) => l.level >= 50)).toEqual([]);
}, 120_000);
