// Triggering and reading scans. Moving a scan past `queued` is the scan runner's job (scan-lifecycle.ts).
import { requireScope } from "../../auth/scopes.ts";
import { isForeignKeyViolation, isUniqueViolation } from "../../db/client.ts";
import { conflict, invalid, notFound } from "../../errors.ts";
import type { Scan } from "../../generated/prisma/client.ts";
import { isId, newId } from "../../ids.ts";
import { visibleUnderApplicationWhere } from "../access/viewer.ts";
import { requireApplication, requireApplicationIfConfined } from "../applications/require-application.ts";
import type { ServiceContext } from "../context.ts";
import { findPage, type Page, type PageRequest } from "../pagination.ts";
import { bodyObject, parseInput, READ_ONLY_FIELDS } from "../validation.ts";
import { SCAN_QUEUED_CHANNEL } from "./scan-queued-channel.ts";
import { engineSourceColumns } from "./scan-source.ts";
import { triggerScanSchema } from "./scans.schemas.ts";

/**
 * Queues a scan. The partial unique index scans_one_active_per_type decides conflicts, so of any
 * number of racing triggers of one type exactly one wins; the foreign key decides existence.
 */
export async function triggerScan(ctx: ServiceContext, applicationId: string, body: unknown): Promise<Scan> {
  const actor = requireScope(ctx.actor, "scans:write");
  const input = parseInput(triggerScanSchema, bodyObject(body, READ_ONLY_FIELDS));
  if (!isId(applicationId)) throw notFound("Application");
  await requireApplicationIfConfined(ctx.db, actor, applicationId);
  const engine = ctx.settings.scanEngines[input.scanType];
  if (engine?.needsServiceUrl) await requireServiceUrl(ctx, applicationId, input.scanType);
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
        ...(ctx.settings.externalScanTypes.includes(input.scanType) && {
          sourceKind: "report" as const,
          sourceTool: "external",
        }),
        ...(engine?.source && engineSourceColumns(engine.source)),
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

/** An engine that crawls the application (the dast baseline) has nothing to scan without its serviceUrl: 400. */
async function requireServiceUrl(ctx: ServiceContext, applicationId: string, scanType: string): Promise<void> {
  const application = await ctx.db.application.findUnique({
    where: { id: applicationId },
    select: { serviceUrl: true },
  });
  if (!application) throw notFound("Application");
  if (!application.serviceUrl) {
    throw invalid(`The application has no serviceUrl for the ${scanType} scan to crawl`, [
      {
        path: "serviceUrl",
        message: `Required to trigger a ${scanType} scan (SCAN_ENGINES runs ${scanType} on the baseline engine): set the application's serviceUrl first`,
      },
    ]);
  }
}

export async function listScans(ctx: ServiceContext, applicationId: string, page: PageRequest): Promise<Page<Scan>> {
  const actor = requireScope(ctx.actor, "scans:read");
  await requireApplication(ctx.db, actor, applicationId);
  return findPage(page, (args) => ctx.db.scan.findMany({ ...args, where: { AND: [{ applicationId }, args.where] } }));
}

export async function getScan(ctx: ServiceContext, applicationId: string, scanId: string): Promise<Scan> {
  const actor = requireScope(ctx.actor, "scans:read");
  const scan =
    isId(scanId) && isId(applicationId)
      ? await ctx.db.scan.findFirst({ where: { id: scanId, applicationId, ...visibleUnderApplicationWhere(actor) } })
      : null;
  if (scan) return scan; // its application exists (foreign key): one query on the common path
  await requireApplication(ctx.db, actor, applicationId);
  throw notFound("Scan");
}
