import { requireScope, type Actor } from "../../auth/scopes.ts";
import { viewerTeams, visibleUnderApplicationWhere } from "../access/viewer.ts";
import { notFound } from "../../errors.ts";
import type { Prisma, Vulnerability, VulnerabilityChange } from "../../generated/prisma/client.ts";
import { isId } from "../../ids.ts";
import type { ServiceContext } from "../context.ts";
import { findApplication } from "../applications/application-reads.ts";
import { emptyPage, findPage, toPage, type Page, type PageRequest } from "../pagination.ts";
import { findApplicationVulnerabilitiesNewestFirst } from "./vulnerability-reads.ts";
import { parseInput } from "../validation.ts";
import { vulnerabilityFilterSchema, type RawVulnerabilityFilter } from "./vulnerabilities.schemas.ts";

export async function listApplicationVulnerabilities(
  ctx: ServiceContext,
  applicationId: string,
  rawFilter: RawVulnerabilityFilter,
  page: PageRequest,
): Promise<Page<Vulnerability>> {
  const actor = requireScope(ctx.actor, "vulnerabilities:read");
  const filter = parseInput(vulnerabilityFilterSchema, rawFilter, "Filter");
  if (!isId(applicationId)) throw notFound("Application");
  const teams = viewerTeams(actor);
  const rows = await findApplicationVulnerabilitiesNewestFirst(ctx.pool, applicationId, teams, page, filter);
  // Rows imply the application (foreign key): its existence is asked only of an empty page.
  if (rows.length === 0 && !(await findApplication(ctx.pool, applicationId, teams))) throw notFound("Application");
  return toPage(rows, page.limit);
}

/** One of the application's vulnerabilities; 404 when the application has no such one. */
export async function getApplicationVulnerability(
  ctx: ServiceContext,
  applicationId: string,
  vulnerabilityId: string,
): Promise<Vulnerability> {
  const actor = requireScope(ctx.actor, "vulnerabilities:read");
  const found =
    isId(applicationId) && isId(vulnerabilityId)
      ? await ctx.db.vulnerability.findFirst({
          where: { id: vulnerabilityId, applicationId, ...visibleUnderApplicationWhere(actor) },
        })
      : null;
  if (!found) throw notFound("Vulnerability");
  return found;
}

/** Every change of the vulnerability's status, oldest first (docs/spec/CONTRACT.md §13). */
export async function vulnerabilityHistory(
  ctx: ServiceContext,
  applicationId: string,
  vulnerabilityId: string,
): Promise<VulnerabilityChange[]> {
  const vulnerability = await getApplicationVulnerability(ctx, applicationId, vulnerabilityId);
  return ctx.db.vulnerabilityChange.findMany({ where: { vulnerabilityId: vulnerability.id }, orderBy: { id: "asc" } });
}

/** The histories of several vulnerabilities at once (GraphQL's Vulnerability.history under a list), each oldest first. */
export async function vulnerabilityHistories(
  ctx: ServiceContext,
  vulnerabilityIds: readonly string[],
): Promise<Map<string, VulnerabilityChange[]>> {
  const actor = requireScope(ctx.actor, "vulnerabilities:read");
  const changes = await ctx.db.vulnerabilityChange.findMany({
    where: {
      vulnerabilityId: { in: [...vulnerabilityIds] },
      ...(viewerTeams(actor) !== null && { vulnerability: visibleUnderApplicationWhere(actor) }),
    },
    orderBy: { id: "asc" },
  });
  const byVulnerability = new Map<string, VulnerabilityChange[]>(vulnerabilityIds.map((id) => [id, []]));
  for (const change of changes) byVulnerability.get(change.vulnerabilityId)?.push(change);
  return byVulnerability;
}

// Reads for dashboards (GraphQL) across applications; those per application, for a list of
// applications at once, are in vulnerabilities-per-application.ts.

/** Filters of the cross-application list: the per-application ones plus the application. */
export interface VulnerabilitiesFilter extends RawVulnerabilityFilter {
  applicationId?: string;
}

function vulnerabilitiesWhere(actor: Actor, rawFilter: VulnerabilitiesFilter): Prisma.VulnerabilityWhereInput | null {
  const { applicationId, ...rest } = rawFilter;
  const filter = parseInput(vulnerabilityFilterSchema, rest, "Filter");
  if (applicationId !== undefined && !isId(applicationId)) return null;
  return { ...filter, ...(applicationId !== undefined && { applicationId }), ...visibleUnderApplicationWhere(actor) };
}

export async function listVulnerabilities(
  ctx: ServiceContext,
  rawFilter: VulnerabilitiesFilter,
  page: PageRequest,
): Promise<Page<Vulnerability>> {
  const actor = requireScope(ctx.actor, "vulnerabilities:read");
  const where = vulnerabilitiesWhere(actor, rawFilter);
  if (!where) return emptyPage();
  return findPage(page, (args) => ctx.db.vulnerability.findMany({ ...args, where: { AND: [where, args.where] } }));
}

export async function countVulnerabilities(ctx: ServiceContext, rawFilter: VulnerabilitiesFilter): Promise<number> {
  const actor = requireScope(ctx.actor, "vulnerabilities:read");
  const where = vulnerabilitiesWhere(actor, rawFilter);
  return where ? ctx.db.vulnerability.count({ where }) : 0;
}
