// Subscriptions: the webhook events, live. Who may receive what, and which events each keeps, is
// the domain's (event-subscriptions.ts).
import { openEventSubscription, type EventSubscriptionFilter } from "../../domain/events/event-subscriptions.ts";
import {
  EVENT_TYPES,
  type EventEnvelope,
  type PolicyViolatedData,
  type ScanEventData,
  type VulnerabilityCreatedData,
} from "../../events/catalog.ts";
import type { GraphQLContext } from "../context.ts";
import { builder } from "../builder.ts";
import { ScanSummaryRef } from "./scan.ts";
import { EventTypeEnum, PolicyActionEnum, ScanStatusEnum, ScanTypeEnum, SeverityEnum } from "./enums.ts";

const EventEnvelopeRef = builder.objectRef<EventEnvelope>("Event").implement({
  description: "The webhook envelope without its signature, verbatim: eventType is the webhook's (e.g. scan.completed).",
  fields: (t) => ({
    eventId: t.exposeID("eventId"),
    eventType: t.exposeString("eventType"),
    timestamp: t.field({ type: "DateTime", resolve: (e) => e.timestamp }),
    data: t.field({ type: "JSON", resolve: (e) => e.data }),
  }),
});

const ScanEventRef = builder.objectRef<ScanEventData>("ScanEvent").implement({
  description: "A scan's state as carried by scan.started, scan.completed and scan.failed.",
  fields: (t) => ({
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

const VulnerabilityCreatedRef = builder.objectRef<VulnerabilityCreatedData>("VulnerabilityCreatedEvent").implement({
  fields: (t) => ({
    id: t.exposeID("id"),
    severity: t.field({ type: SeverityEnum, resolve: (v) => v.severity as never }),
    applicationId: t.exposeID("applicationId"),
    title: t.exposeString("title"),
    createdAt: t.field({ type: "DateTime", resolve: (v) => v.createdAt }),
  }),
});

const PolicyViolatedRef = builder.objectRef<PolicyViolatedData>("PolicyViolatedEvent").implement({
  fields: (t) => ({
    policyId: t.exposeID("policyId"),
    policyName: t.exposeString("policyName"),
    action: t.field({ type: PolicyActionEnum, resolve: (p) => p.action as never }),
    applicationId: t.exposeID("applicationId"),
    scanId: t.exposeID("scanId"),
    vulnerabilityIds: t.exposeIDList("vulnerabilityIds"),
  }),
});

/** The committed events the caller may receive that `filter` keeps, from now on. */
const streamOf = (ctx: GraphQLContext, filter: EventSubscriptionFilter) => ctx.events.subscribe(openEventSubscription(ctx.service, filter));

const idArg = (id: string | number | null | undefined) => (id == null ? undefined : String(id));

builder.subscriptionFields((t) => ({
  events: t.field({
    type: EventEnvelopeRef,
    description: "Every event of the given types (all types when omitted), as webhooks receive them.",
    args: {
      types: t.arg({ type: [EventTypeEnum], required: false }),
      applicationId: t.arg.id({ required: false }),
    },
    subscribe: async (_root, args, ctx) =>
      streamOf(ctx, { types: args.types?.length ? args.types : EVENT_TYPES, applicationId: idArg(args.applicationId) }),
    resolve: (event) => event,
  }),
  vulnerabilityCreated: t.field({
    type: VulnerabilityCreatedRef,
    args: { applicationId: t.arg.id({ required: false }), minSeverity: t.arg({ type: SeverityEnum, required: false }) },
    subscribe: async (_root, args, ctx) =>
      streamOf(ctx, {
        types: ["vulnerability.created"],
        applicationId: idArg(args.applicationId),
        minSeverity: args.minSeverity ?? undefined,
      }),
    resolve: (event) => (event as EventEnvelope<"vulnerability.created">).data,
  }),
  scanCompleted: t.field({
    type: ScanEventRef,
    args: { applicationId: t.arg.id({ required: false }) },
    subscribe: async (_root, args, ctx) => streamOf(ctx, { types: ["scan.completed"], applicationId: idArg(args.applicationId) }),
    resolve: (event) => (event as EventEnvelope<"scan.completed">).data,
  }),
  scanUpdated: t.field({
    type: ScanEventRef,
    description: "Live scan status: started, completed or failed.",
    args: { applicationId: t.arg.id({ required: false }) },
    subscribe: async (_root, args, ctx) =>
      streamOf(ctx, { types: ["scan.started", "scan.completed", "scan.failed"], applicationId: idArg(args.applicationId) }),
    resolve: (event) => (event as EventEnvelope<"scan.started">).data,
  }),
  policyViolated: t.field({
    type: PolicyViolatedRef,
    args: { applicationId: t.arg.id({ required: false }) },
    subscribe: async (_root, args, ctx) => streamOf(ctx, { types: ["policy.violated"], applicationId: idArg(args.applicationId) }),
    resolve: (event) => (event as EventEnvelope<"policy.violated">).data,
  }),
}));
