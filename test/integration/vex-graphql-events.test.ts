// Triage through GraphQL and in the event stream (docs/spec/CONTRACT.md §13): applyVex answers as REST does,
// Vulnerability.analysis / history / aliases are typed, and vulnerability.updated reaches
// webhooks and subscriptions with the vulnerability.resolved data plus analysis.
import type { Client } from "graphql-ws";
import { createDispatcher, DISPATCHER_NAME } from "../../src/dispatcher/dispatcher.ts";
import { verifyWebhookDelivery } from "../../src/webhooks/verify-delivery.ts";
import { codesOf, gql, wsClient } from "../helpers/graphql.ts";
import { startHttpsReceiver, type HttpsReceiver } from "../helpers/https-receiver.ts";
import { createSelfSignedCert, type SelfSignedCert } from "../helpers/self-signed-cert.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";
import { cyclonedxReport, openVex, statement } from "../helpers/vex-documents.ts";

let t: TestApp;
let cert: SelfSignedCert;
let receiver: HttpsReceiver;
const clients: Client[] = [];

beforeAll(async () => {
  cert = createSelfSignedCert();
  t = await startTestApp({ SCAN_DURATION_MS: "0", WEBHOOK_ALLOW_PRIVATE_TARGETS: "true" });
  receiver = await startHttpsReceiver(cert);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.dispose()));
  await receiver.close();
  await t.close();
  cert.remove();
});

let n = 0;
async function scannedApplication(): Promise<string> {
  const app = (await t.request("POST", "/applications", { body: { name: `vex-gql-${++n}` } })).body.id as string;
  const report = cyclonedxReport([
    {
      id: "CVE-2021-44228",
      aliases: ["GHSA-jfh8-c2jp-5v3q"],
      purl: "pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1",
      severity: "critical",
    },
    { id: "CVE-2021-23337", purl: "pkg:npm/lodash@4.17.20" },
  ]);
  const res = await t.request("POST", `/applications/${app}/scan-reports`, {
    rawBody: JSON.stringify(report),
    headers: { "content-type": "application/json" },
  });
  expect(res.status).toBe(202);
  return app;
}

const APPLY = `mutation($app: ID!, $doc: JSON!) { applyVex(applicationId: $app, document: $doc) { applied unchanged pending errors { path message } } }`;

describe("applyVex", () => {
  it("answers as POST /applications/{id}/vex does, and the vulnerability shows its typed analysis and history", async () => {
    const app = await scannedApplication();
    const document = openVex([
      statement("GHSA-jfh8-c2jp-5v3q", "not_affected"),
      statement("CVE-2021-23337", "fixed", { products: [{ "@id": "https://example.com/not-a-package" }] }),
      statement("CVE-2099-0001", "affected"),
    ]);
    const res = await gql(
      t,
      APPLY,
      { app, doc: document },
      { token: await t.token(["vulnerabilities:triage"], "dana") },
    );
    expect(res.body).toEqual({
      data: {
        applyVex: {
          applied: 1,
          unchanged: 0,
          pending: 1,
          errors: [{ path: "/statements/1/products", message: expect.any(String) }],
        },
      },
    });

    const read = await gql(
      t,
      `query($app: ID!) { application(id: $app) { vulnerabilities(first: 10, filter: { status: ACCEPTED }) { edges { node {
      aliases status analysis { state justification detail response source by at }
      history { from to source scanId by justification detail at } } } } } }`,
      { app },
    );
    const [node] = read.body.data.application.vulnerabilities.edges.map((e: any) => e.node);
    expect(node).toEqual({
      aliases: ["CVE-2021-44228", "GHSA-jfh8-c2jp-5v3q"],
      status: "ACCEPTED",
      analysis: {
        state: "NOT_AFFECTED",
        justification: "VULNERABLE_CODE_NOT_IN_EXECUTE_PATH",
        detail: "The vulnerable parser is never given user input.",
        response: [],
        source: "VEX",
        by: "dana",
        at: expect.any(String),
      },
      history: [
        {
          from: null,
          to: "OPEN",
          source: "REPORT",
          scanId: expect.any(String),
          by: "tester",
          justification: null,
          detail: null,
          at: expect.any(String),
        },
        {
          from: "OPEN",
          to: "ACCEPTED",
          source: "VEX",
          scanId: null,
          by: "dana",
          justification: "vulnerable_code_not_in_execute_path",
          detail: expect.any(String),
          at: expect.any(String),
        },
      ],
    });
  });

  it("refuses a bad document with JSON Pointers, and a caller without vulnerabilities:triage, before reading it", async () => {
    const app = await scannedApplication();
    const bad = await gql(t, APPLY, { app, doc: { ...openVex([statement("CVE-2021-44228", "fixed")]), version: 0 } });
    expect(codesOf(bad)).toEqual(["BAD_USER_INPUT"]);
    expect(bad.body.errors[0].extensions.errors).toEqual([{ path: "/version", message: expect.any(String) }]);
    const forbidden = await gql(
      t,
      APPLY,
      { app, doc: { not: "a VEX" } },
      { token: await t.token(["vulnerabilities:read"]) },
    );
    expect(codesOf(forbidden)).toEqual(["FORBIDDEN"]);
    const missing = await gql(t, APPLY, {
      app: "01a20f0e-0000-7000-8000-000000000000",
      doc: openVex([statement("CVE-2021-44228", "fixed")]),
    });
    expect(codesOf(missing)).toEqual(["NOT_FOUND"]);
  });
});

describe("Application.vulnerability", () => {
  it("answers one vulnerability with its analysis and history, as GET /applications/{id}/vulnerabilities/{vulnerabilityId}; NOT_FOUND under another application", async () => {
    const [app, other] = [await scannedApplication(), await scannedApplication()];
    await t.request("POST", `/applications/${app}/vex`, {
      body: openVex([statement("CVE-2021-44228", "not_affected")]),
      token: await t.token(["vulnerabilities:triage"], "erin"),
    });
    const [rest] = (await t.request("GET", `/applications/${app}/vulnerabilities?status=accepted`)).body;
    const restHistory = (await t.request("GET", `/applications/${app}/vulnerabilities/${rest.id}/history`)).body;
    const ONE = `query($app: ID!, $id: ID!) { application(id: $app) { vulnerability(id: $id) {
      id status analysis { state justification detail by at } history { from to source by at } } } }`;
    const res = await gql(t, ONE, { app, id: rest.id });
    expect(res.body.data.application.vulnerability).toEqual({
      id: rest.id,
      status: "ACCEPTED",
      analysis: {
        state: "NOT_AFFECTED",
        justification: "VULNERABLE_CODE_NOT_IN_EXECUTE_PATH",
        detail: rest.analysis.detail,
        by: "erin",
        at: rest.analysis.at,
      },
      history: restHistory.map((c: any) => ({
        from: c.from?.toUpperCase() ?? null,
        to: c.to.toUpperCase(),
        source: c.source.toUpperCase(),
        by: c.by,
        at: c.at,
      })),
    });
    expect(codesOf(await gql(t, ONE, { app: other, id: rest.id }))).toEqual(["NOT_FOUND"]);
    expect(codesOf(await gql(t, ONE, { app, id: rest.id }, { token: await t.token(["applications:read"]) }))).toEqual([
      "FORBIDDEN",
    ]);
  });
});

/** Applies statements that flip the vulnerability between two statuses until `seen` holds (subscriptions start asynchronously). */
async function flipUntil(app: string, seen: () => boolean) {
  for (let i = 0; i < 50 && !seen(); i++) {
    await t.request("POST", `/applications/${app}/vex`, {
      body: openVex([statement("CVE-2021-23337", i % 2 === 0 ? "under_investigation" : "affected")]),
    });
    for (let j = 0; j < 10 && !seen(); j++) await new Promise((r) => setTimeout(r, 20));
  }
  expect(seen()).toBe(true);
}

describe("vulnerability.updated", () => {
  it("reaches a webhook subscribed to it, signed, with the vulnerability.resolved data plus analysis", async () => {
    const app = await scannedApplication();
    const hook = await t.request("POST", "/webhooks", {
      body: {
        name: "triage",
        url: receiver.url("/triage"),
        events: ["vulnerability.updated"],
        secret: "triage-secret",
      },
    });
    expect(hook.status).toBe(201);
    await t.request("POST", `/applications/${app}/vex`, {
      body: openVex([statement("CVE-2021-23337", "not_affected")]),
      token: await t.token(["vulnerabilities:triage"], "erin"),
    });
    // Events committed before the subscription existed but not fanned out yet reach it too: this application's is the one to check.
    const ofThisApplication = (r: { path: string; rawBody: Buffer }) =>
      r.path === "/triage" && JSON.parse(String(r.rawBody)).data.applicationId === app;
    const dispatcher = createDispatcher({
      db: t.app.db,
      config: t.app.config,
      log: t.app.log,
      metrics: t.app.metrics,
      webhookSecrets: t.app.webhookSecrets,
      tls: { ca: cert.cert },
    });
    try {
      // Running, not one pass: one pass fans out and sends a batch, which other tests' events may fill.
      dispatcher.start();
      await receiver.waitFor((requests) => requests.some(ofThisApplication));
    } finally {
      await dispatcher.stop();
    }
    const request = receiver.requests.find(ofThisApplication)!;
    const delivered = verifyWebhookDelivery({
      rawBody: request.rawBody,
      secret: "triage-secret",
      headers: request.headers,
    });
    const vulnerability = (await t.request("GET", `/applications/${app}/vulnerabilities?status=accepted`)).body[0];
    expect(delivered).toMatchObject({ eventType: "vulnerability.updated" });
    expect(delivered.data).toEqual({
      id: vulnerability.id,
      severity: "high",
      applicationId: app,
      title: vulnerability.title,
      createdAt: vulnerability.createdAt,
      status: "accepted",
      analysis: vulnerability.analysis,
    });
    expect(delivered.data).toMatchObject({ analysis: { state: "not_affected", source: "vex", by: "erin" } });
  });

  it("reaches subscriptions: typed vulnerabilityUpdated and the events envelope, for the read scope", async () => {
    // Live events are the ones the dispatcher's fan-out has numbered into the event log.
    t.app.workers.find((w) => w.name === DISPATCHER_NAME)!.start();
    const app = await scannedApplication();
    const client = wsClient(t, { authorization: `Bearer ${await t.token(["vulnerabilities:read"])}` });
    clients.push(client);
    const typed: any[] = [];
    const envelopes: any[] = [];
    client.subscribe(
      {
        query: `subscription($app: ID) { vulnerabilityUpdated(applicationId: $app) { id applicationId status analysis { state source } } }`,
        variables: { app },
      },
      {
        next: (value) => typed.push(value),
        error: () => {},
        complete: () => {},
      },
    );
    client.subscribe(
      { query: `subscription { events(types: [VULNERABILITY_UPDATED]) { eventType data } }` },
      {
        next: (value) => envelopes.push(value),
        error: () => {},
        complete: () => {},
      },
    );
    await flipUntil(app, () => typed.length > 0 && envelopes.some((e) => e.data.events.data.applicationId === app));
    expect(typed[0].errors).toBeUndefined();
    expect(typed[0].data.vulnerabilityUpdated).toMatchObject({
      applicationId: app,
      status: expect.stringMatching(/^(IN_PROGRESS|OPEN)$/),
      analysis: { source: "VEX" },
    });
    const envelope = envelopes.find((e) => e.data.events.data.applicationId === app).data.events;
    expect(envelope.eventType).toBe("vulnerability.updated");
    expect(Object.keys(envelope.data).sort()).toEqual([
      "analysis",
      "applicationId",
      "createdAt",
      "id",
      "severity",
      "status",
      "title",
    ]);

    // Without the read scope the subscription is refused.
    const outsider = wsClient(t, { authorization: `Bearer ${await t.token(["scans:read"])}` });
    clients.push(outsider);
    const refused = await new Promise<any>((resolve) =>
      outsider.subscribe(
        { query: `subscription { vulnerabilityUpdated { id } }` },
        { next: resolve, error: resolve, complete: () => {} },
      ),
    );
    expect(JSON.stringify(refused)).toMatch(/FORBIDDEN/);
  });
});
