// Query.remediationMetrics (docs/spec/CONTRACT.md §19), as GET /remediation-metrics answers it.
import {
  remediationMetrics,
  type RemediationMetrics,
  type SeverityMetrics,
} from "../../domain/sla/remediation-metrics.ts";
import { builder } from "../builder.ts";

const AgeBinRef = builder.objectRef<SeverityMetrics["openByAge"][number]>("OpenVulnerabilitiesByAge").implement({
  fields: (t) => ({
    fromDays: t.exposeInt("fromDays"),
    toDays: t.exposeInt("toDays", { nullable: true, description: "null on the last bin (and older)" }),
    count: t.exposeInt("count"),
  }),
});

const MttrRef = builder.objectRef<SeverityMetrics["mttrDays"]>("TimeToRemediate").implement({
  fields: (t) => ({
    median: t.exposeFloat("median", { nullable: true }),
    p90: t.exposeFloat("p90", { nullable: true }),
  }),
});

const SeverityMetricsRef = builder.objectRef<SeverityMetrics>("SeverityRemediationMetrics").implement({
  fields: (t) => ({
    resolved: t.exposeInt("resolved", { description: "Resolutions in the period (each one counts)." }),
    mttrDays: t.field({
      type: MttrRef,
      description: "Days from first found (or the reopening) to resolved.",
      resolve: (m) => m.mttrDays,
    }),
    withinSla: t.exposeFloat("withinSla", {
      nullable: true,
      description: "The share resolved before their deadline; null when none.",
    }),
    openByAge: t.field({ type: [AgeBinRef], resolve: (m) => m.openByAge }),
    breached: t.exposeInt("breached", { description: "Open or in progress past their deadline, now." }),
  }),
});

const BySeverityRef = builder.objectRef<RemediationMetrics["bySeverity"]>("RemediationMetricsBySeverity").implement({
  fields: (t) => ({
    critical: t.field({ type: SeverityMetricsRef, resolve: (b) => b.critical }),
    high: t.field({ type: SeverityMetricsRef, resolve: (b) => b.high }),
    medium: t.field({ type: SeverityMetricsRef, resolve: (b) => b.medium }),
    low: t.field({ type: SeverityMetricsRef, resolve: (b) => b.low }),
  }),
});

const RemediationMetricsRef = builder.objectRef<RemediationMetrics>("RemediationMetrics").implement({
  fields: (t) => ({
    from: t.field({ type: "DateTime", resolve: (m) => m.from }),
    to: t.field({ type: "DateTime", resolve: (m) => m.to }),
    applicationId: t.exposeID("applicationId", { nullable: true }),
    owner: t.exposeString("owner", { nullable: true }),
    bySeverity: t.field({ type: BySeverityRef, resolve: (m) => m.bySeverity }),
  }),
});

builder.queryFields((t) => ({
  remediationMetrics: t.field({
    type: RemediationMetricsRef,
    description: "As GET /remediation-metrics: per severity, over the period (default the last 90 days) and now.",
    args: {
      from: t.arg({ type: "DateTime", required: false }),
      to: t.arg({ type: "DateTime", required: false }),
      applicationId: t.arg.id({ required: false }),
      owner: t.arg.string({ required: false }),
    },
    resolve: (_root, args, ctx) =>
      remediationMetrics(ctx.service, {
        from: args.from,
        to: args.to,
        applicationId: args.applicationId == null ? undefined : String(args.applicationId),
        owner: args.owner,
      }),
  }),
}));
