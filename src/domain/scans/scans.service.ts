// Triggering and reading scans. Moving a scan past `queued` is the scan runner's job (scan-lifecycle.ts).
import { requireScope } from "../../auth/scopes.ts";
import { isForeignKeyViolation, isUniqueViolation } from "../../db/client.ts";
import { conflict, notFound } from "../../errors.ts";
import type { Scan } from "../../generated/prisma/client.ts";
import { isId, newId } from "../../ids.ts";
import { requireApplication } from "../applications/require-application.ts";
import type { ServiceContext } from "../context.ts";
import { findPage, type Page, type PageRequest } from "../pagination.ts";
import { pageIdsPerParent, pagesByParent } from "../pagination-per-parent.ts";
import { bodyObject, parseInput, READ_ONLY_FIELDS } from "../validation.ts";
import { triggerScanSchema } from "./scans.schemas.ts";

/** NOTIFY channel that wakes scan runners when a scan is queued (polling covers a missed one). */
export const SCAN_QUEUED_CHANNEL = "appsec_scan_queued";

/**
 * Queues a scan. The partial unique index scans_one_active_per_type decides conflicts, so of any
 * number of racing triggers of one type exactly one wins; the foreign key decides existence.
 */
export async function triggerScan(ctx: ServiceContext, applicationId: string, body: unknown): Promise<Scan> {
  const actor = requireScope(ctx.actor, "scans:write");
  const input = parseInput(triggerScanSchema, bodyObject(body, READ_ONLY_FIELDS));
  if (!isId(applicationId)) throw notFound("Application");
  let scan: Scan;
  try {
    scan = await ctx.db.scan.create({
      data: {
        id: newId(),
        applicationId,
        scanType: input.scanType,
        status: "queued",
        triggeredBy: input.triggeredBy ?? actor.sub,
        createdAt: new Date(),
        // Its report, from CI, will say which tool it was.
        ...(ctx.settings.externalScanTypes.includes(input.scanType) && { sourceKind: "report" as const, sourceTool: "external" }),
      },
    });
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw conflict(`A ${input.scanType} scan is already queued or running for this application`);
    }
    if (isForeignKeyViolation(err)) throw notFound("Application");
    throw err;
  }
  await ctx.db.$executeRaw`SELECT pg_notify(${SCAN_QUEUED_CHANNEL}, ${scan.id})`;
  return scan;
}

export async function listScans(ctx: ServiceContext, applicationId: string, page: PageRequest): Promise<Page<Scan>> {
  requireScope(ctx.actor, "scans:read");
  await requireApplication(ctx.db, applicationId);
  return findPage(page, (args) => ctx.db.scan.findMany({ ...args, where: { AND: [{ applicationId }, args.where] } }));
}

export async function getScan(ctx: ServiceContext, applicationId: string, scanId: string): Promise<Scan> {
  requireScope(ctx.actor, "scans:read");
  const scan = isId(scanId) && isId(applicationId) ? await ctx.db.scan.findFirst({ where: { id: scanId, applicationId } }) : null;
  if (scan) return scan; // its application exists (foreign key): one query on the common path
  await requireApplication(ctx.db, applicationId);
  throw notFound("Scan");
}

// Reads for dashboards (GraphQL), batched per application: constant statements for N applications.

/** One page of scans for each of many applications, in two statements. */
export async function listScansOfApplications(
  ctx: ServiceContext,
  applicationIds: readonly string[],
  page: PageRequest,
): Promise<Map<string, Page<Scan>>> {
  requireScope(ctx.actor, "scans:read");
  const ids = await pageIdsPerParent(ctx.db, "scans", applicationIds, page);
  const rows = ids.length ? await ctx.db.scan.findMany({ where: { id: { in: ids } } }) : [];
  return pagesByParent(applicationIds, rows, page.limit);
}

export async function countScansOfApplications(ctx: ServiceContext, applicationIds: readonly string[]): Promise<Map<string, number>> {
  requireScope(ctx.actor, "scans:read");
  const groups = await ctx.db.scan.groupBy({
    by: ["applicationId"],
    where: { applicationId: { in: [...applicationIds] } },
    _count: { _all: true },
  });
  return new Map(groups.map((g) => [g.applicationId, g._count._all]));
}

/** The newest scan of each type, for each of many applications, in two statements. */
export async function latestScansOfApplications(
  ctx: ServiceContext,
  applicationIds: readonly string[],
): Promise<Map<string, Scan[]>> {
  requireScope(ctx.actor, "scans:read");
  const latest = new Map<string, Scan[]>(applicationIds.map((id) => [id, []]));
  if (applicationIds.length === 0) return latest;
  const ids = await ctx.db.$queryRaw<{ id: string }[]>`
    SELECT DISTINCT ON (application_id, scan_type) id::text
      FROM scans
     WHERE application_id = ANY(${[...applicationIds]}::uuid[])
     ORDER BY application_id, scan_type, created_at DESC, id DESC`;
  if (ids.length === 0) return latest;
  const rows = await ctx.db.scan.findMany({ where: { id: { in: ids.map((r) => r.id) } }, orderBy: { scanType: "asc" } });
  for (const scan of rows) latest.get(scan.applicationId)?.push(scan);
  return latest;
}
