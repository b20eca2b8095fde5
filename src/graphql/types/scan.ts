// Scan: the type, Application.scans / Application.latestScans, and the triggerScan mutation.
// Fields under a list of applications go through ctx.perApplication: one statement for all.
import type { GraphQLResolveInfo } from "graphql";
import type { ScanSummary } from "../../domain/scans/scan-summary.ts";
import { failureOf } from "../../domain/scans/scan.view.ts";
import * as perApplication from "../../domain/scans/scans-per-application.ts";
import * as scans from "../../domain/scans/scans.service.ts";
import { builder } from "../builder.ts";
import { countedConnection } from "../connection.ts";
import { pageRequestOf } from "../connection-shape.ts";
import { restShaped } from "../inputs.ts";
import { fieldNamesAt } from "../selection.ts";
import { ApplicationRef, loadApplication } from "./application.ts";
import { ReportFormatEnum, ScanSourceKindEnum, ScanStatusEnum, ScanTypeEnum } from "./enums.ts";

export const ScanSummaryRef = builder.objectRef<ScanSummary>("ScanSummary").implement({
  description: "What one scan reported, by severity.",
  fields: (t) => ({
    totalFindings: t.exposeInt("totalFindings"),
    critical: t.exposeInt("critical"),
    high: t.exposeInt("high"),
    medium: t.exposeInt("medium"),
    low: t.exposeInt("low"),
  }),
});

interface ScanSource {
  kind: "engine" | "report";
  format: string | null;
  tool: string;
  toolVersion: string | null;
}

const ScanSourceRef = builder.objectRef<ScanSource>("ScanSource").implement({
  description: "Where a scan's findings come from: the built-in engine for its type, or an uploaded report.",
  fields: (t) => ({
    kind: t.expose("kind", { type: ScanSourceKindEnum }),
    format: t.field({ type: ReportFormatEnum, nullable: true, resolve: (s) => s.format as never }),
    tool: t.exposeString("tool"),
    toolVersion: t.exposeString("toolVersion", { nullable: true }),
  }),
});

const ScanFailureRef = builder.objectRef<{ reason: string }>("ScanFailure").implement({
  description: "Why a failed scan failed.",
  fields: (t) => ({ reason: t.exposeString("reason") }),
});

export const ScanRef = builder.prismaObject("Scan", {
  fields: (t) => ({
    id: t.exposeID("id"),
    applicationId: t.exposeID("applicationId"),
    scanType: t.expose("scanType", { type: ScanTypeEnum }),
    status: t.expose("status", { type: ScanStatusEnum }),
    triggeredBy: t.exposeString("triggeredBy", { nullable: true }),
    startedAt: t.expose("startedAt", { type: "DateTime", nullable: true }),
    completedAt: t.expose("completedAt", { type: "DateTime", nullable: true }),
    summary: t.field({ type: ScanSummaryRef, nullable: true, resolve: (s) => s.summary as ScanSummary | null }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    source: t.field({
      type: ScanSourceRef,
      resolve: (s) => ({
        kind: s.sourceKind,
        format: s.sourceFormat,
        tool: s.sourceTool,
        toolVersion: s.sourceToolVersion,
      }),
    }),
    failure: t.field({
      type: ScanFailureRef,
      nullable: true,
      description: "Why the scan failed; null unless its status is FAILED.",
      resolve: (s) => failureOf(s),
    }),
    application: t.field({
      type: ApplicationRef,
      nullable: true,
      resolve: (s, _args, ctx) => loadApplication(ctx, s.applicationId),
    }),
  }),
});

const ScanConnection = countedConnection(ScanRef, "Scan");

/** GraphQL fields computed from other columns. */
const SCAN_COLUMNS_OF_FIELD: Record<string, string[]> = {
  source: ["sourceKind", "sourceFormat", "sourceTool", "sourceToolVersion"],
  failure: ["status", "error"],
};

/** The Scan fields a selection reads: GraphQL's own names, and computed ones from their columns. */
const scanFieldsAt = (info: GraphQLResolveInfo, path: readonly string[] = []) =>
  fieldNamesAt(info, path).flatMap((name) => SCAN_COLUMNS_OF_FIELD[name] ?? [name]);

builder.prismaObjectFields("Application", (t) => ({
  scans: t.field({
    type: ScanConnection,
    description: "The application's scans, newest first.",
    args: { first: t.arg.int(), after: t.arg.string() },
    resolve: (app, args, ctx, info) =>
      ctx.perApplication.connection(app.id, info, () => {
        const page = pageRequestOf(args);
        return {
          after: page.cursor,
          pageRead: perApplication.scanPages(ctx.service, page, scanFieldsAt(info, ["edges", "node"])),
          countRead: perApplication.scanCount(ctx.service),
        };
      }),
  }),
  latestScans: t.field({
    type: [ScanRef],
    description: "The newest scan of each scan type.",
    resolve: (app, _args, ctx, info) =>
      ctx.perApplication.read(app.id, info, () => perApplication.latestScans(ctx.service, scanFieldsAt(info))),
  }),
}));

const TriggerScanInput = builder.inputType("TriggerScanInput", {
  fields: (t) => ({
    scanType: t.field({ type: ScanTypeEnum, required: true }),
    triggeredBy: t.string({ required: false }),
  }),
});

builder.mutationFields((t) => ({
  triggerScan: t.prismaField({
    type: "Scan",
    description:
      "Queues a scan (as POST /applications/{id}/scans); CONFLICT while one of the same type is queued or running.",
    args: { applicationId: t.arg.id({ required: true }), input: t.arg({ type: TriggerScanInput, required: true }) },
    resolve: (_query, _root, args, ctx) =>
      scans.triggerScan(ctx.service, String(args.applicationId), restShaped(args.input)),
  }),
}));
