// Vulnerability reads for many applications at once (GraphQL fields under a list of applications),
// each one subquery of readPerApplication's single statement.
import { requireScope } from "../../auth/scopes.ts";
import { Prisma, type Vulnerability } from "../../generated/prisma/client.ts";
import type { ServiceContext } from "../context.ts";
import { toPage, type Page, type PageRequest } from "../pagination.ts";
import { countOf, pageRowsSql, projection, reviveRows, type PerApplicationRead } from "../per-application.ts";
import { parseInput, type Severity } from "../validation.ts";
import {
  vulnerabilityFilterSchema,
  type RawVulnerabilityFilter,
  type VulnerabilityFilter,
  type VULNERABILITY_STATUSES,
} from "./vulnerabilities.schemas.ts";
import { slaStateSql } from "../sla/sla-sql.ts";
import { VULNERABILITY_COLUMNS } from "./vulnerability-columns.ts";

const DATES = ["resolvedAt", "createdAt", "updatedAt", "slaClockBase", "slaPausedAt"];

function filterSql(filter: VulnerabilityFilter): Prisma.Sql {
  const conditions = [
    filter.severity && Prisma.sql`t.severity::text = ${filter.severity}`,
    filter.status && Prisma.sql`t.status::text = ${filter.status}`,
    filter.tool && Prisma.sql`t.tool = ${filter.tool}`,
    filter.sla && Prisma.raw(slaStateSql(filter.sla, "a.id")),
  ].filter((c): c is Prisma.Sql => Boolean(c));
  return conditions.length ? Prisma.join(conditions, " AND ") : Prisma.sql`TRUE`;
}

/**
 * A page of each application's vulnerabilities, newest first. With `fields`, rows hold only those
 * fields (and id, applicationId, createdAt): for callers that read no others.
 */
export function vulnerabilityPages(
  ctx: ServiceContext,
  rawFilter: RawVulnerabilityFilter,
  page: PageRequest,
  fields?: readonly string[],
): PerApplicationRead<Page<Vulnerability>> {
  requireScope(ctx.actor, "vulnerabilities:read");
  const filter = parseInput(vulnerabilityFilterSchema, rawFilter, "Filter");
  const columns = projection(VULNERABILITY_COLUMNS, fields);
  return {
    key: `vulnerabilityPages:${JSON.stringify([filter, page])}:${columns}`,
    sql: pageRowsSql(columns, "vulnerabilities", filterSql(filter), page),
    decode: (value) => toPage(reviveRows<Vulnerability>(value, DATES), page.limit),
  };
}

/** How many of each application's vulnerabilities match the filter. */
export function vulnerabilityCount(ctx: ServiceContext, rawFilter: RawVulnerabilityFilter): PerApplicationRead<number> {
  requireScope(ctx.actor, "vulnerabilities:read");
  const filter = parseInput(vulnerabilityFilterSchema, rawFilter, "Filter");
  return {
    key: `vulnerabilityCount:${JSON.stringify(filter)}`,
    sql: Prisma.sql`SELECT count(*) FROM vulnerabilities t WHERE t.application_id = a.id AND ${filterSql(filter)}`,
    decode: countOf,
  };
}

type VulnerabilityStatus = (typeof VULNERABILITY_STATUSES)[number];

export interface VulnerabilityCounts {
  total: number;
  bySeverity: Record<Severity, number>;
  byStatus: Record<VulnerabilityStatus, number>;
  /** open + in_progress, by severity: what a dashboard's headline shows. */
  unresolvedBySeverity: Record<Severity, number>;
  /** Open or in progress past their remediation deadline (docs/spec/CONTRACT.md §19). */
  breached: number;
}

export const emptyVulnerabilityCounts = (): VulnerabilityCounts => ({
  total: 0,
  bySeverity: { critical: 0, high: 0, medium: 0, low: 0 },
  byStatus: { open: 0, in_progress: 0, resolved: 0, accepted: 0 },
  unresolvedBySeverity: { critical: 0, high: 0, medium: 0, low: 0 },
  breached: 0,
});

/**
 * Each application's vulnerabilities counted by severity and status: its rows, read by the
 * application's index (no index on status, so that decisions are HOT updates).
 */
export function vulnerabilityCounts(ctx: ServiceContext): PerApplicationRead<VulnerabilityCounts> {
  requireScope(ctx.actor, "vulnerabilities:read");
  return {
    key: "vulnerabilityCounts",
    sql: Prisma.sql`SELECT json_agg(json_build_array(g.severity, g.status, g.n, g.breached)) FROM (
      SELECT t.severity, t.status, count(*) AS n,
             count(*) FILTER (WHERE ${Prisma.raw(slaStateSql("breached", "a.id"))}) AS breached
        FROM vulnerabilities t WHERE t.application_id = a.id GROUP BY t.severity, t.status) g`,
    decode: (value) => {
      const counts = emptyVulnerabilityCounts();
      for (const [severity, status, n, breached] of (value ?? []) as [
        Severity,
        VulnerabilityStatus,
        number,
        number,
      ][]) {
        counts.total += n;
        counts.breached += breached;
        counts.bySeverity[severity] += n;
        counts.byStatus[status] += n;
        if (status === "open" || status === "in_progress") counts.unresolvedBySeverity[severity] += n;
      }
      return counts;
    },
  };
}
