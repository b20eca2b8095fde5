// Scan reads for many applications at once (GraphQL fields under a list of applications), each one
// subquery of readPerApplication's single statement.
import { requireScope } from "../../auth/scopes.ts";
import { Prisma, type Scan } from "../../generated/prisma/client.ts";
import type { ServiceContext } from "../context.ts";
import { toPage, type Page, type PageRequest } from "../pagination.ts";
import { countOf, pageRowsSql, projection, reviveRows, type PerApplicationRead } from "../per-application.ts";

/** Every column by the name and type of Prisma's Scan field (a test compares the two). */
export const SCAN_COLUMNS: Readonly<Record<keyof Scan, string>> = {
  id: "t.id",
  applicationId: "t.application_id",
  scanType: "t.scan_type",
  status: "t.status",
  triggeredBy: "t.triggered_by",
  createdAt: "t.created_at",
  startedAt: "t.started_at",
  completedAt: "t.completed_at",
  summary: "t.summary",
  error: "t.error",
  leaseOwner: "t.lease_owner",
  leaseExpiresAt: "t.lease_expires_at",
  runAttempts: "t.run_attempts",
  agent: "t.agent",
  leaseId: "t.lease_id",
  leaseSeconds: "t.lease_seconds",
  sourceKind: "t.source_kind",
  sourceFormat: "t.source_format",
  sourceTool: "t.source_tool",
  sourceToolVersion: "t.source_tool_version",
};
const DATES = ["createdAt", "startedAt", "completedAt", "leaseExpiresAt"];

/** A page of each application's scans, newest first; `fields` as in vulnerabilityPages. */
export function scanPages(
  ctx: ServiceContext,
  page: PageRequest,
  fields?: readonly string[],
): PerApplicationRead<Page<Scan>> {
  requireScope(ctx.actor, "scans:read");
  const columns = projection(SCAN_COLUMNS, fields);
  return {
    key: `scanPages:${JSON.stringify(page)}:${columns}`,
    sql: pageRowsSql(columns, "scans", Prisma.sql`TRUE`, page),
    decode: (value) => toPage(reviveRows<Scan>(value, DATES), page.limit),
  };
}

export function scanCount(ctx: ServiceContext): PerApplicationRead<number> {
  requireScope(ctx.actor, "scans:read");
  return {
    key: "scanCount",
    sql: Prisma.sql`SELECT count(*) FROM scans t WHERE t.application_id = a.id`,
    decode: countOf,
  };
}

/** Each application's newest scan of each type, in scan type order (one index probe per type). */
export function latestScans(ctx: ServiceContext, fields?: readonly string[]): PerApplicationRead<Scan[]> {
  requireScope(ctx.actor, "scans:read");
  // Ordered by type, so the type is always read.
  const columns = projection(SCAN_COLUMNS, fields && [...fields, "scanType"]);
  return {
    key: `latestScans:${columns}`,
    sql: Prisma.sql`SELECT json_agg(s ORDER BY s."scanType") FROM unnest(enum_range(NULL::"ScanType")) AS type(scan_type)
      CROSS JOIN LATERAL (SELECT ${Prisma.raw(columns)} FROM scans t
         WHERE t.application_id = a.id AND t.scan_type = type.scan_type
         ORDER BY t.created_at DESC, t.id DESC LIMIT 1) s`,
    decode: (value) => reviveRows<Scan>(value, DATES),
  };
}
