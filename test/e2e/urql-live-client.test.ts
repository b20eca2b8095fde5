// A dashboard as a GraphQL client library builds one: urql's subscription exchange over graphql-ws,
// against the service's own process (dist/main.js), with documents whose arguments are variables, as
// generated documents send them (an enum, a list of enums, an ID). The events are real: an
// application scanned through the REST API by the service's scan runner (issue 59).
import { Client as UrqlClient, fetchExchange, gql, subscriptionExchange, type OperationResult } from "@urql/core";
import { createClient, type Client as WsClient } from "graphql-ws";
import WebSocket from "ws";
import { mintToken } from "../../src/auth/mint-token.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { eventually } from "../helpers/scan-engines.ts";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.ts";
import { TEST_JWT_SECRET, TEST_WEBHOOK_SECRET_KEYS } from "../helpers/test-app.ts";

let database: TestDatabase;
let service: ServiceProcess;
let token: string;
beforeAll(async () => {
  database = await createTestDatabase();
  service = await startServiceProcess({
    env: {
      DATABASE_URL: database.url,
      AUTH_JWT_SECRET: TEST_JWT_SECRET,
      WEBHOOK_SECRET_KEYS: TEST_WEBHOOK_SECRET_KEYS,
      NODE_ENV: "production",
      SCAN_DURATION_MS: "0",
    },
  });
  token = await mintToken({ secret: TEST_JWT_SECRET, sub: "urql-dashboard", scopes: ["admin"] });
}, 60_000);
afterAll(async () => {
  service?.child.kill("SIGTERM");
  await service?.exited;
  await database?.drop();
});

async function rest(method: string, path: string, body?: unknown) {
  const res = await fetch(`${service.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

const HEAD = gql`
  query Head {
    eventLogHead
  }
`;
const SCAN_EVENTS = gql`
  subscription ScanEvents($app: ID, $types: [EventType!], $after: String) {
    events(applicationId: $app, types: $types, after: $after) {
      eventId
      eventType
      data
    }
  }
`;
const SERIOUS_FINDINGS = gql`
  subscription SeriousFindings($app: ID, $min: Severity, $after: String) {
    vulnerabilityCreated(applicationId: $app, minSeverity: $min, after: $after) {
      id
      severity
      applicationId
    }
  }
`;

it("receives every event a REST-triggered scan causes, through urql's subscription exchange over graphql-ws", async () => {
  const ws: WsClient = createClient({
    url: `${service.baseUrl.replace(/^http/, "ws")}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: 0,
  });
  const client = new UrqlClient({
    url: `${service.baseUrl}/graphql`,
    fetchOptions: { headers: { authorization: `Bearer ${token}` } },
    exchanges: [
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => ({ unsubscribe: ws.subscribe({ ...request, query: request.query ?? "" }, sink) }),
        }),
      }),
    ],
  });
  const unsubscribes: (() => void)[] = [];
  const watch = <T>(query: typeof SCAN_EVENTS, variables: Record<string, unknown>) => {
    const results: OperationResult<T>[] = [];
    unsubscribes.push(client.subscription<T>(query, variables).subscribe((r) => results.push(r)).unsubscribe);
    return results;
  };
  try {
    const app = (await rest("POST", "/applications", { name: "urql-dashboard-app" })).id as string;
    // From the log's head on, as a dashboard that must miss nothing subscribes: whatever the scan
    // commits before the subscriptions are running, they replay.
    const head = await client.query<{ eventLogHead: string }>(HEAD, {}).toPromise();
    expect(head.error).toBeUndefined();
    const after = head.data!.eventLogHead;
    const scanEvents = watch<{ events: { eventId: string; eventType: string; data: { id: string } } }>(SCAN_EVENTS, {
      app,
      types: ["SCAN_STARTED", "SCAN_COMPLETED"],
      after,
    });
    const serious = watch<{ vulnerabilityCreated: { id: string; severity: string; applicationId: string } }>(
      SERIOUS_FINDINGS,
      { app, min: "HIGH", after },
    );

    const scan = (await rest("POST", `/applications/${app}/scans`, { scanType: "sca" })) as { id: string };
    const log = await eventually(async () => {
      const events = (await rest("GET", `/events?applicationId=${app}&limit=500`)) as { id: string; type: string }[];
      return events.some((e) => e.type === "scan.completed") && events;
    }, 30_000);
    const findings = (await rest("GET", `/applications/${app}/vulnerabilities?limit=500`)) as {
      id: string;
      severity: string;
    }[];
    const expectedScanEvents = log.filter((e) => e.type === "scan.started" || e.type === "scan.completed");
    const expectedSerious = findings.filter((f) => f.severity === "high" || f.severity === "critical");
    // Bounded; the assertions below say what is missing.
    await eventually(
      async () => scanEvents.length >= expectedScanEvents.length && serious.length >= expectedSerious.length,
      10_000,
    ).catch(() => {});

    expect(scanEvents.flatMap((r) => (r.error ? [r.error.message] : []))).toEqual([]);
    expect(serious.flatMap((r) => (r.error ? [r.error.message] : []))).toEqual([]);
    expect(scanEvents.map((r) => [r.data!.events.eventId, r.data!.events.eventType])).toEqual(
      expectedScanEvents.map((e) => [e.id, e.type]),
    );
    expect(scanEvents.every((r) => r.data!.events.data.id === scan.id)).toBe(true);
    expect(expectedSerious.length).toBeGreaterThan(0);
    expect(serious.map((r) => r.data!.vulnerabilityCreated.id).sort()).toEqual(expectedSerious.map((f) => f.id).sort());
    expect(serious.every((r) => ["HIGH", "CRITICAL"].includes(r.data!.vulnerabilityCreated.severity))).toBe(true);
  } finally {
    for (const unsubscribe of unsubscribes) unsubscribe();
    await ws.dispose();
  }
});
