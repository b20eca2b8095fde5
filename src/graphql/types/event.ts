// The event log (docs/spec/CONTRACT.md §14): the `events` query reads it a page at a time, and subscriptions
// stream it live, each first replaying what was committed after its `after` cursor when it has one
// (sharedSubscriptions() decides how each execution streams: EventStreamMode). Who may receive what,
// and which events each keeps, is the domain's (event-subscriptions.ts, event-log.service.ts).
import { headCursor, openReplay, readEvents } from "../../domain/events/event-log.service.ts";
import { openEventSubscription, type EventSubscriptionFilter } from "../../domain/events/event-subscriptions.ts";
import type { Analysis } from "../../domain/vulnerabilities/analysis.ts";
import {
  EVENT_TYPES,
  type PolicyViolatedData,
  type ScanEventData,
  type VulnerabilityCreatedData,
  type VulnerabilitySlaBreachedData,
  type VulnerabilityUpdatedData,
} from "../../events/catalog.ts";
import { encodeEventCursor, type LoggedEvent } from "../../events/event-log.ts";
import type { EventStreamMode, GraphQLContext } from "../context.ts";
import { builder } from "../builder.ts";
import { plainConnection } from "../connection.ts";
import { pageRequestOf } from "../connection-shape.ts";
import { ScanSummaryRef } from "./scan.ts";
import {
  EventTypeEnum,
  PolicyActionEnum,
  ScanStatusEnum,
  ScanTypeEnum,
  SeverityEnum,
  VulnerabilityStatusEnum,
} from "./enums.ts";
import { AnalysisRef } from "./vulnerability-triage.ts";

const CURSOR_DESCRIPTION =
  "Where this event is in the event log: subscribe (or query `events`) with `after` set to it to resume after it.";

/** A typed event's data with the cursor of the event that carried it. */
type WithCursor<T> = T & { cursor: string };
const withCursor = <T>(event: LoggedEvent): WithCursor<T> => ({
  ...(event.data as T),
  cursor: encodeEventCursor(event.position),
});

const EventEnvelopeRef = builder.objectRef<LoggedEvent>("Event").implement({
  description:
    "The webhook envelope without its signature, verbatim: eventType is the webhook's (e.g. scan.completed).",
  fields: (t) => ({
    eventId: t.exposeID("eventId"),
    eventType: t.exposeString("eventType"),
    timestamp: t.field({ type: "DateTime", resolve: (e) => e.timestamp }),
    data: t.field({ type: "JSON", resolve: (e) => e.data }),
    cursor: t.string({ description: CURSOR_DESCRIPTION, resolve: (e) => encodeEventCursor(e.position) }),
  }),
});

const ScanEventRef = builder.objectRef<WithCursor<ScanEventData>>("ScanEvent").implement({
  description: "A scan's state as carried by scan.started, scan.completed and scan.failed.",
  fields: (t) => ({
    cursor: t.exposeString("cursor", { description: CURSOR_DESCRIPTION }),
    id: t.exposeID("id"),
    applicationId: t.exposeID("applicationId"),
    scanType: t.field({ type: ScanTypeEnum, resolve: (s) => s.scanType as never }),
    status: t.field({ type: ScanStatusEnum, resolve: (s) => s.status as never }),
    triggeredBy: t.exposeString("triggeredBy", { nullable: true }),
    startedAt: t.field({ type: "DateTime", nullable: true, resolve: (s) => s.startedAt }),
    completedAt: t.field({ type: "DateTime", nullable: true, resolve: (s) => s.completedAt }),
    summary: t.field({ type: ScanSummaryRef, nullable: true, resolve: (s) => s.summary }),
  }),
});

const VulnerabilityCreatedRef = builder
  .objectRef<WithCursor<VulnerabilityCreatedData>>("VulnerabilityCreatedEvent")
  .implement({
    fields: (t) => ({
      cursor: t.exposeString("cursor", { description: CURSOR_DESCRIPTION }),
      id: t.exposeID("id"),
      severity: t.field({ type: SeverityEnum, resolve: (v) => v.severity as never }),
      applicationId: t.exposeID("applicationId"),
      title: t.exposeString("title"),
      createdAt: t.field({ type: "DateTime", resolve: (v) => v.createdAt }),
    }),
  });

const VulnerabilityUpdatedRef = builder
  .objectRef<WithCursor<VulnerabilityUpdatedData>>("VulnerabilityUpdatedEvent")
  .implement({
    description: "A vulnerability's status or analysis changed, by a VEX document or the report that found it.",
    fields: (t) => ({
      cursor: t.exposeString("cursor", { description: CURSOR_DESCRIPTION }),
      id: t.exposeID("id"),
      applicationId: t.exposeID("applicationId"),
      severity: t.field({ type: SeverityEnum, resolve: (v) => v.severity as never }),
      title: t.exposeString("title"),
      createdAt: t.field({ type: "DateTime", resolve: (v) => v.createdAt }),
      status: t.field({ type: VulnerabilityStatusEnum, resolve: (v) => v.status as never }),
      analysis: t.field({ type: AnalysisRef, nullable: true, resolve: (v) => v.analysis as Analysis | null }),
    }),
  });

const VulnerabilitySlaBreachedRef = builder
  .objectRef<WithCursor<VulnerabilitySlaBreachedData>>("VulnerabilitySlaBreachedEvent")
  .implement({
    description: "A vulnerability's remediation deadline passed while it was open or in progress.",
    fields: (t) => ({
      cursor: t.exposeString("cursor", { description: CURSOR_DESCRIPTION }),
      id: t.exposeID("id"),
      severity: t.field({ type: SeverityEnum, resolve: (v) => v.severity as never }),
      applicationId: t.exposeID("applicationId"),
      title: t.exposeString("title"),
      createdAt: t.field({ type: "DateTime", resolve: (v) => v.createdAt }),
      dueAt: t.field({ type: "DateTime", resolve: (v) => v.dueAt }),
    }),
  });

const PolicyViolatedRef = builder.objectRef<WithCursor<PolicyViolatedData>>("PolicyViolatedEvent").implement({
  fields: (t) => ({
    cursor: t.exposeString("cursor", { description: CURSOR_DESCRIPTION }),
    policyId: t.exposeID("policyId"),
    policyName: t.exposeString("policyName"),
    action: t.field({ type: PolicyActionEnum, resolve: (p) => p.action as never }),
    applicationId: t.exposeID("applicationId"),
    scanId: t.exposeID("scanId"),
    vulnerabilityIds: t.exposeIDList("vulnerabilityIds"),
  }),
});

/** Hands GraphQL the stream's events, noting each one's position for the result it becomes. */
function handing(
  source: AsyncIterableIterator<LoggedEvent>,
  mode: EventStreamMode,
): AsyncIterableIterator<LoggedEvent> {
  return {
    async next() {
      const step = await source.next();
      if (!step.done) mode.handed.push(step.value.position);
      return step;
    },
    return: () => source.return?.() ?? Promise.resolve({ value: undefined, done: true }),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/** The committed events the caller may receive that `filter` keeps: replayed after a cursor, or live from now. */
async function streamOf(
  ctx: GraphQLContext,
  filter: EventSubscriptionFilter,
): Promise<AsyncIterableIterator<LoggedEvent>> {
  const mode = ctx.eventStream ?? { handed: [] };
  const source =
    mode.after !== undefined
      ? await openReplay(ctx.service, filter, mode.after, mode.caughtUp ?? (() => true), ctx.replayRest)
      : await ctx.events.subscribe(openEventSubscription(ctx.service, filter));
  return handing(source, mode);
}

const idArg = (id: string | number | null | undefined) => (id == null ? undefined : String(id));

const AFTER_DESCRIPTION =
  "A cursor: first the events committed after it, in order, then the live ones, none missing or repeated. Over SSE, Last-Event-ID does the same.";

const EventConnection = plainConnection(EventEnvelopeRef, "Event");

builder.queryFields((t) => ({
  eventLogHead: t.string({
    description:
      "The cursor of the newest event in the log now (extension). A subscription given it as `after` receives everything committed from " +
      "now on and can resume after a drop before its first payload. Needs a read scope of some event type.",
    resolve: (_root, _args, ctx) => headCursor(ctx.service),
  }),
  events: t.field({
    type: EventConnection,
    description:
      "The event log, oldest first: committed events in the order they were committed, each once. Only the types whose read scope " +
      "the token has (asking for another is FORBIDDEN). A filtered page may hold fewer than `first` events and still have a next page. " +
      "A cursor older than what is kept is CURSOR_EXPIRED.",
    args: {
      after: t.arg.string({
        required: false,
        description: "Only events committed after this cursor; from the oldest kept when absent.",
      }),
      first: t.arg.int({ required: false }),
      types: t.arg({ type: [EventTypeEnum], required: false }),
      applicationId: t.arg.id({ required: false }),
    },
    resolve: async (_root, args, ctx) => {
      const { limit } = pageRequestOf({ first: args.first });
      const page = await readEvents(ctx.service, {
        after: args.after ?? undefined,
        types: args.types?.length ? args.types : undefined,
        applicationId: idArg(args.applicationId),
        limit,
      });
      const edges = page.events.map((node) => ({ cursor: encodeEventCursor(node.position), node }));
      return {
        edges,
        pageInfo: {
          hasNextPage: page.nextCursor !== null,
          hasPreviousPage: args.after != null,
          startCursor: edges[0]?.cursor ?? null,
          endCursor: page.endCursor,
        },
      };
    },
  }),
}));

builder.subscriptionFields((t) => ({
  events: t.field({
    type: EventEnvelopeRef,
    description: "Every event of the given types (all types when omitted), as webhooks receive them.",
    args: {
      types: t.arg({ type: [EventTypeEnum], required: false }),
      applicationId: t.arg.id({ required: false }),
      after: t.arg.string({ required: false, description: AFTER_DESCRIPTION }),
    },
    subscribe: async (_root, args, ctx) =>
      streamOf(ctx, { types: args.types?.length ? args.types : EVENT_TYPES, applicationId: idArg(args.applicationId) }),
    resolve: (event) => event,
  }),
  vulnerabilityCreated: t.field({
    type: VulnerabilityCreatedRef,
    args: {
      applicationId: t.arg.id({ required: false }),
      minSeverity: t.arg({ type: SeverityEnum, required: false }),
      after: t.arg.string({ required: false, description: AFTER_DESCRIPTION }),
    },
    subscribe: async (_root, args, ctx) =>
      streamOf(ctx, {
        types: ["vulnerability.created"],
        applicationId: idArg(args.applicationId),
        minSeverity: args.minSeverity ?? undefined,
      }),
    resolve: (event) => withCursor<VulnerabilityCreatedData>(event as LoggedEvent),
  }),
  vulnerabilityUpdated: t.field({
    type: VulnerabilityUpdatedRef,
    description: "A vulnerability's status or analysis changed (vulnerability.updated).",
    args: {
      applicationId: t.arg.id({ required: false }),
      after: t.arg.string({ required: false, description: AFTER_DESCRIPTION }),
    },
    subscribe: async (_root, args, ctx) =>
      streamOf(ctx, { types: ["vulnerability.updated"], applicationId: idArg(args.applicationId) }),
    resolve: (event) => withCursor<VulnerabilityUpdatedData>(event as LoggedEvent),
  }),
  vulnerabilitySlaBreached: t.field({
    type: VulnerabilitySlaBreachedRef,
    description: "A vulnerability's remediation deadline passed (vulnerability.sla_breached).",
    args: {
      applicationId: t.arg.id({ required: false }),
      after: t.arg.string({ required: false, description: AFTER_DESCRIPTION }),
    },
    subscribe: async (_root, args, ctx) =>
      streamOf(ctx, { types: ["vulnerability.sla_breached"], applicationId: idArg(args.applicationId) }),
    resolve: (event) => withCursor<VulnerabilitySlaBreachedData>(event as LoggedEvent),
  }),
  scanCompleted: t.field({
    type: ScanEventRef,
    args: {
      applicationId: t.arg.id({ required: false }),
      after: t.arg.string({ required: false, description: AFTER_DESCRIPTION }),
    },
    subscribe: async (_root, args, ctx) =>
      streamOf(ctx, { types: ["scan.completed"], applicationId: idArg(args.applicationId) }),
    resolve: (event) => withCursor<ScanEventData>(event as LoggedEvent),
  }),
  scanUpdated: t.field({
    type: ScanEventRef,
    description: "Live scan status: started, completed or failed.",
    args: {
      applicationId: t.arg.id({ required: false }),
      after: t.arg.string({ required: false, description: AFTER_DESCRIPTION }),
    },
    subscribe: async (_root, args, ctx) =>
      streamOf(ctx, {
        types: ["scan.started", "scan.completed", "scan.failed"],
        applicationId: idArg(args.applicationId),
      }),
    resolve: (event) => withCursor<ScanEventData>(event as LoggedEvent),
  }),
  policyViolated: t.field({
    type: PolicyViolatedRef,
    args: {
      applicationId: t.arg.id({ required: false }),
      after: t.arg.string({ required: false, description: AFTER_DESCRIPTION }),
    },
    subscribe: async (_root, args, ctx) =>
      streamOf(ctx, { types: ["policy.violated"], applicationId: idArg(args.applicationId) }),
    resolve: (event) => withCursor<PolicyViolatedData>(event as LoggedEvent),
  }),
}));
