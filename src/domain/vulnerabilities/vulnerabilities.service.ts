import { requireScope } from "../../auth/scopes.ts";
import { Prisma, type Vulnerability } from "../../generated/prisma/client.ts";
import { isId } from "../../ids.ts";
import { requireApplication } from "../applications/require-application.ts";
import type { ServiceContext } from "../context.ts";
import { findPage, type Page, type PageRequest } from "../pagination.ts";
import { pageIdsPerParent, pagesByParent } from "../pagination-per-parent.ts";
import { parseInput, type Severity } from "../validation.ts";
import { VULNERABILITY_STATUSES, vulnerabilityFilterSchema } from "./vulnerabilities.schemas.ts";

/** Filters arrive as raw strings (query parameters, GraphQL arguments) and are validated here. */
export interface RawVulnerabilityFilter {
  severity?: unknown;
  status?: unknown;
  tool?: unknown;
}

export async function listApplicationVulnerabilities(
  ctx: ServiceContext,
  applicationId: string,
  rawFilter: RawVulnerabilityFilter,
  page: PageRequest,
): Promise<Page<Vulnerability>> {
  requireScope(ctx.actor, "vulnerabilities:read");
  const filter = parseInput(vulnerabilityFilterSchema, rawFilter, "Filter");
  await requireApplication(ctx.db, applicationId);
  return findPage(page, (args) =>
    ctx.db.vulnerability.findMany({ ...args, where: { AND: [{ applicationId, ...filter }, args.where] } }),
  );
}

// Reads for dashboards (GraphQL): across applications, and batched per application so a list of
// N applications costs a constant number of statements.

/** Filters of the cross-application list: the per-application ones plus the application. */
export interface VulnerabilitiesFilter extends RawVulnerabilityFilter {
  applicationId?: string;
}

function vulnerabilitiesWhere(rawFilter: VulnerabilitiesFilter): Prisma.VulnerabilityWhereInput | null {
  const { applicationId, ...rest } = rawFilter;
  const filter = parseInput(vulnerabilityFilterSchema, rest, "Filter");
  if (applicationId !== undefined && !isId(applicationId)) return null;
  return { ...filter, ...(applicationId !== undefined && { applicationId }) };
}

export async function listVulnerabilities(
  ctx: ServiceContext,
  rawFilter: VulnerabilitiesFilter,
  page: PageRequest,
): Promise<Page<Vulnerability>> {
  requireScope(ctx.actor, "vulnerabilities:read");
  const where = vulnerabilitiesWhere(rawFilter);
  if (!where) return { items: [], nextCursor: null };
  return findPage(page, (args) => ctx.db.vulnerability.findMany({ ...args, where: { AND: [where, args.where] } }));
}

export async function countVulnerabilities(ctx: ServiceContext, rawFilter: VulnerabilitiesFilter): Promise<number> {
  requireScope(ctx.actor, "vulnerabilities:read");
  const where = vulnerabilitiesWhere(rawFilter);
  return where ? ctx.db.vulnerability.count({ where }) : 0;
}

/** One page of vulnerabilities for each of many applications, in two statements. */
export async function listVulnerabilitiesOfApplications(
  ctx: ServiceContext,
  applicationIds: readonly string[],
  rawFilter: RawVulnerabilityFilter,
  page: PageRequest,
): Promise<Map<string, Page<Vulnerability>>> {
  requireScope(ctx.actor, "vulnerabilities:read");
  const filter = parseInput(vulnerabilityFilterSchema, rawFilter, "Filter");
  const condition = Prisma.sql`${filter.severity ? Prisma.sql`severity::text = ${filter.severity}` : Prisma.sql`TRUE`}
    AND ${filter.status ? Prisma.sql`status::text = ${filter.status}` : Prisma.sql`TRUE`}
    AND ${filter.tool ? Prisma.sql`tool = ${filter.tool}` : Prisma.sql`TRUE`}`;
  const ids = await pageIdsPerParent(ctx.db, "vulnerabilities", applicationIds, page, condition);
  const rows = ids.length ? await ctx.db.vulnerability.findMany({ where: { id: { in: ids } } }) : [];
  return pagesByParent(applicationIds, rows, page.limit);
}

/** How many vulnerabilities match the filter, per application, in one statement. */
export async function countVulnerabilitiesOfApplications(
  ctx: ServiceContext,
  applicationIds: readonly string[],
  rawFilter: RawVulnerabilityFilter,
): Promise<Map<string, number>> {
  requireScope(ctx.actor, "vulnerabilities:read");
  const filter = parseInput(vulnerabilityFilterSchema, rawFilter, "Filter");
  const groups = await ctx.db.vulnerability.groupBy({
    by: ["applicationId"],
    where: { applicationId: { in: [...applicationIds] }, ...filter },
    _count: { _all: true },
  });
  return new Map(groups.map((g) => [g.applicationId, g._count._all]));
}

export interface VulnerabilityCounts {
  total: number;
  bySeverity: Record<Severity, number>;
  byStatus: Record<(typeof VULNERABILITY_STATUSES)[number], number>;
  /** open + in_progress, by severity: what a dashboard's headline shows. */
  unresolvedBySeverity: Record<Severity, number>;
}

export const emptyVulnerabilityCounts = (): VulnerabilityCounts => ({
  total: 0,
  bySeverity: { critical: 0, high: 0, medium: 0, low: 0 },
  byStatus: { open: 0, in_progress: 0, resolved: 0, accepted: 0 },
  unresolvedBySeverity: { critical: 0, high: 0, medium: 0, low: 0 },
});

/** Counts by severity and status for many applications: one groupBy. */
export async function vulnerabilityCountsOfApplications(
  ctx: ServiceContext,
  applicationIds: readonly string[],
): Promise<Map<string, VulnerabilityCounts>> {
  requireScope(ctx.actor, "vulnerabilities:read");
  const groups = await ctx.db.vulnerability.groupBy({
    by: ["applicationId", "severity", "status"],
    where: { applicationId: { in: [...applicationIds] } },
    _count: { _all: true },
  });
  const counts = new Map(applicationIds.map((id) => [id, emptyVulnerabilityCounts()]));
  for (const g of groups) {
    const c = counts.get(g.applicationId);
    if (!c) continue;
    const n = g._count._all;
    c.total += n;
    c.bySeverity[g.severity] += n;
    c.byStatus[g.status] += n;
    if (g.status === "open" || g.status === "in_progress") c.unresolvedBySeverity[g.severity] += n;
  }
  return counts;
}
