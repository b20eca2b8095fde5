// Scan reads for many applications at once (GraphQL fields under a list of applications), each one
// subquery of readPerApplication's single statement.
import { requireScope } from "../../auth/scopes.ts";
import { Prisma, type Scan } from "../../generated/prisma/client.ts";
import type { ServiceContext } from "../context.ts";
import { toPage, type Page, type PageRequest } from "../pagination.ts";
import { countOf, pageRowsSql, reviveRows, type PerApplicationRead } from "../per-application.ts";

/** Every column, named and typed as Prisma's Scan (a test compares the two). */
const COLUMNS = `t.id, t.application_id AS "applicationId", t.scan_type AS "scanType", t.status,
  t.triggered_by AS "triggeredBy", t.created_at AS "createdAt", t.started_at AS "startedAt",
  t.completed_at AS "completedAt", t.summary, t.error, t.lease_owner AS "leaseOwner",
  t.lease_expires_at AS "leaseExpiresAt", t.run_attempts AS "runAttempts", t.source_kind AS "sourceKind",
  t.source_format AS "sourceFormat", t.source_tool AS "sourceTool", t.source_tool_version AS "sourceToolVersion"`;
const DATES = ["createdAt", "startedAt", "completedAt", "leaseExpiresAt"];

/** A page of each application's scans, newest first. */
export function scanPages(ctx: ServiceContext, page: PageRequest): PerApplicationRead<Page<Scan>> {
  requireScope(ctx.actor, "scans:read");
  return {
    key: `scanPages:${JSON.stringify(page)}`,
    sql: pageRowsSql(COLUMNS, "scans", Prisma.sql`TRUE`, page),
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

/** Each application's newest scan of each type, in scan type order: one index probe per type. */
export function latestScans(ctx: ServiceContext): PerApplicationRead<Scan[]> {
  requireScope(ctx.actor, "scans:read");
  return {
    key: "latestScans",
    sql: Prisma.sql`SELECT json_agg(s ORDER BY s."scanType") FROM unnest(enum_range(NULL::"ScanType")) AS type(scan_type)
      CROSS JOIN LATERAL (SELECT ${Prisma.raw(COLUMNS)} FROM scans t
         WHERE t.application_id = a.id AND t.scan_type = type.scan_type
         ORDER BY t.created_at DESC, t.id DESC LIMIT 1) s`,
    decode: (value) => reviveRows<Scan>(value, DATES),
  };
}
