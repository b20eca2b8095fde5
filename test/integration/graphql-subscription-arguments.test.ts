// Every subscription field, walked from the schema, delivers the same payloads whether each of its
// arguments is written in the document or passed as a variable (enums, lists of enums, IDs, the
// `after` cursor), over graphql-ws and over SSE, live and resuming after a cursor: the documents a
// client such as urql or Apollo generates send their arguments as variables (issue 59).
import type { Client } from "graphql-ws";
import type { GraphQLField } from "graphql";
import { DISPATCHER_NAME } from "../../src/dispatcher/dispatcher.ts";
import { EVENT_TYPES, type AuditEventType, type EventType } from "../../src/events/catalog.ts";
import { decodeEventCursor, encodeEventCursor, readHead } from "../../src/events/event-log.ts";
import { recordEvents, type NewEvent } from "../../src/events/outbox.ts";
import { schema } from "../../src/graphql/schema.ts";
import { newId } from "../../src/ids.ts";
import { wsClient } from "../helpers/graphql.ts";
import { fieldsWithArguments, sampleValue, variantsOf, type Pick, type Variant } from "../helpers/graphql-arguments.ts";
import { openSse, type SseStream } from "../helpers/sse.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
let client: Client;
beforeAll(async () => {
  t = await startTestApp({}, { workers: [DISPATCHER_NAME] });
  client = wsClient(t, { authorization: `Bearer ${await t.token()}` });
});
afterAll(async () => {
  await client.dispose();
  await t.close();
});

const SEVERITIES = ["low", "medium", "high", "critical"] as const;

/** An event of `type` about `applicationId` with data of its type's shape; vulnerabilities of `severity`. */
function eventOf(type: EventType, applicationId: string, severity: string, n: number): NewEvent {
  const at = new Date().toISOString();
  const vulnerability = { id: newId(), severity, applicationId, title: `v${n}`, createdAt: at };
  const scan = (status: string) => ({
    id: newId(),
    applicationId,
    scanType: "sca",
    status,
    triggeredBy: `n${n}`,
    startedAt: at,
    completedAt: status === "running" ? null : at,
    summary: status === "completed" ? { totalFindings: 4, critical: 1, high: 1, medium: 1, low: 1 } : null,
  });
  const events: { [T in EventType]: () => NewEvent } = {
    "scan.started": () => ({ type: "scan.started", applicationId, data: scan("running") }),
    "scan.completed": () => ({ type: "scan.completed", applicationId, data: scan("completed") }),
    "scan.failed": () => ({ type: "scan.failed", applicationId, data: scan("failed") }),
    "vulnerability.created": () => ({ type: "vulnerability.created", applicationId, data: vulnerability }),
    "vulnerability.resolved": () => ({
      type: "vulnerability.resolved",
      applicationId,
      data: { ...vulnerability, status: "resolved" },
    }),
    "vulnerability.updated": () => ({
      type: "vulnerability.updated",
      applicationId,
      data: {
        ...vulnerability,
        status: "accepted",
        analysis: {
          state: "not_affected",
          justification: "code_not_reachable",
          detail: `d${n}`,
          response: ["will_not_fix"],
          source: "vex",
          by: "tester",
          at,
        },
      },
    }),
    "vulnerability.sla_breached": () => ({
      type: "vulnerability.sla_breached",
      applicationId,
      data: { ...vulnerability, dueAt: at },
    }),
    "policy.violated": () => ({
      type: "policy.violated",
      applicationId,
      data: {
        policyId: newId(),
        policyName: `p${n}`,
        action: "block",
        applicationId,
        scanId: newId(),
        vulnerabilityIds: [newId()],
      },
    }),
    ...auditEvents(applicationId, n),
  };
  return events[type]();
}

/** The audit trail's events (CONTRACT §17) about the application, made by `n${n}`. */
function auditEvents(applicationId: string, n: number) {
  const actor = { sub: `n${n}` };
  const created = (type: AuditEventType) => () => ({
    type,
    applicationId,
    data: { id: newId(), name: `r${n}`, actor },
  });
  const updated = (type: AuditEventType) => () => ({
    type,
    applicationId,
    data: { id: newId(), name: `r${n}`, actor, changed: ["name"] },
  });
  return {
    "application.created": created("application.created"),
    "application.updated": updated("application.updated"),
    "application.deleted": created("application.deleted"),
    "policy.created": created("policy.created"),
    "policy.updated": updated("policy.updated"),
    "policy.deleted": created("policy.deleted"),
    "webhook.created": created("webhook.created"),
    "webhook.updated": updated("webhook.updated"),
    "webhook.deleted": created("webhook.deleted"),
  } as { [T in AuditEventType]: () => NewEvent };
}

/** Every type of event, each at every severity, about each application. */
const everyEvent = (applicationIds: string[]) =>
  applicationIds.flatMap((app) =>
    EVENT_TYPES.flatMap((type) => SEVERITIES.map((severity, n) => eventOf(type, app, severity, n))),
  );

/** Commits `events` in one transaction and waits (bounded) for their places in the log: the first and the last. */
async function commit(events: NewEvent[]): Promise<{ first: number; last: number }> {
  const ids = await t.app.db.prisma.$transaction((tx) => recordEvents(tx, events));
  for (let i = 0; i < 250; i++) {
    const rows = await t.app.db.prisma.event.findMany({ where: { id: { in: ids } }, select: { position: true } });
    const positions = rows.flatMap((r) => (r.position === null ? [] : [Number(r.position)]));
    if (positions.length === ids.length) return { first: Math.min(...positions), last: Math.max(...positions) };
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("the events were not numbered into the log within 5 s");
}

interface Payload {
  data?: Record<string, { cursor?: string } | null> | null;
  errors?: unknown[];
}

/** One subscription's payloads, each with the log position of its event (from its cursor). */
interface Stream {
  name: string;
  mode: "live" | "resuming";
  received: { position?: number; payload: Payload }[];
  stop(): Promise<void> | void;
}

function record(field: string, received: Stream["received"], payload: Payload) {
  const cursor = payload.data?.[field]?.cursor;
  received.push({ position: cursor === undefined ? undefined : decodeEventCursor(cursor), payload });
}

function overGraphqlWs(field: string, mode: Stream["mode"], variant: Variant): Stream {
  const received: Stream["received"] = [];
  const stop = client.subscribe(
    { query: variant.query, variables: variant.variables },
    {
      next: (payload) => record(field, received, payload as Payload),
      error: (err) => received.push({ payload: { errors: [String(err)] } }),
      complete: () => {},
    },
  );
  return { name: `graphql-ws ${mode} ${variant.label}`, mode, received, stop };
}

async function overSse(field: string, mode: Stream["mode"], variant: Variant): Promise<Stream> {
  const received: Stream["received"] = [];
  const sse: SseStream = await openSse(
    t.baseUrl,
    { query: variant.query, variables: variant.variables, token: await t.token() },
    (event) => {
      if (event.event === "next") record(field, received, JSON.parse(event.data) as Payload);
    },
  );
  if (sse.status !== 200) received.push({ payload: { errors: [`HTTP ${sse.status}`] } });
  return {
    name: `SSE ${mode} ${variant.label}`,
    mode,
    received,
    stop: async () => {
      sse.abort();
      await sse.ended;
    },
  };
}

/** Polls (bounded) until `done`; the assertions that follow say what was missing. */
async function until(done: () => boolean, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !done() && Date.now() < end;) await new Promise((r) => setTimeout(r, 20));
}

const subscriptionFields = fieldsWithArguments(schema.getSubscriptionType()!);

it("walks every subscription field, each taking arguments", () => {
  expect(subscriptionFields.map((f) => f.name).sort()).toEqual(
    Object.keys(schema.getSubscriptionType()!.getFields()).sort(),
  );
  for (const field of subscriptionFields) expect(field.args.map((a) => a.name)).toContain("after");
});

describe.each(subscriptionFields.map((f) => [f.name, f] as const))(
  "subscription %s",
  (name, field: GraphQLField<unknown, unknown>) => {
    it("delivers the same payloads with each argument inline or a variable, over graphql-ws and SSE, live and after a cursor", async () => {
      const [app, other] = [newId(), newId()];
      const cursor = encodeEventCursor(await readHead(t.app.db.pool));
      const pick: Pick = (at) => (at.endsWith(".after") ? cursor : at.endsWith(".applicationId") ? app : undefined);
      const values = Object.fromEntries(
        field.args.map((a) => [a.name, sampleValue(`Subscription.${name}.${a.name}`, a.type, pick)]),
      );
      const { after: _after, ...liveValues } = values;

      // Committed before anyone subscribes: only the subscriptions resuming after `cursor` replay them.
      const replayed = await commit(everyEvent([app, other]));
      const streams: Stream[] = [];
      for (const [mode, args] of [
        ["live", liveValues],
        ["resuming", values],
      ] as const) {
        for (const variant of variantsOf("subscription", field, args)) {
          streams.push(overGraphqlWs(name, mode, variant));
          streams.push(await overSse(name, mode, variant));
        }
      }
      try {
        // Subscriptions start asynchronously: events until every one has heard something.
        for (let i = 0; i < 50 && !streams.every((s) => s.received.length > 0); i++) {
          await commit(everyEvent([app]));
          await until(() => streams.every((s) => s.received.length > 0), 200);
        }
        const live = await commit(everyEvent([app, other]));
        // Delivered in log order: once a stream has an event of this last batch, it has every one before.
        const closing = await commit(everyEvent([app]));
        await until(() =>
          streams.every((s) => s.received.some((r) => r.payload.errors || (r.position ?? -1) >= closing.first)),
        );

        const compared = (s: Stream) =>
          s.received
            .filter(
              ({ position: p }) => p === undefined || (p < closing.first && (s.mode === "resuming" || p >= live.first)),
            )
            .map((r) => r.payload);
        const [liveInline, resumingInline] = (["live", "resuming"] as const).map((mode) =>
          streams.find((s) => s.mode === mode && s.name === `graphql-ws ${mode} inline`)!,
        );
        for (const reference of [liveInline!, resumingInline!]) {
          const payloads = compared(reference);
          expect(payloads.length).toBeGreaterThan(0);
          expect(payloads.filter((p) => p.errors)).toEqual([]);
          expect(JSON.stringify(payloads)).not.toContain(other); // the arguments filtered
        }
        // The resuming ones replayed what was committed before they subscribed.
        expect(
          resumingInline!.received.some((r) => r.position! >= replayed.first && r.position! <= replayed.last),
        ).toBe(true);

        const differing = streams.flatMap((s) => {
          const [got, want] = [compared(s), compared(s.mode === "live" ? liveInline! : resumingInline!)];
          if (JSON.stringify(got) === JSON.stringify(want)) return [];
          let at = 0;
          while (JSON.stringify(got[at]) === JSON.stringify(want[at])) at++;
          return [{ stream: s.name, payloads: got.length, expected: want.length, first: got[at], instead: want[at] }];
        });
        expect(differing).toEqual([]);
      } finally {
        await Promise.all(streams.map((s) => s.stop()));
      }
    });
  },
);
