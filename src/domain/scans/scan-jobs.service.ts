// The scan-job lease API for agents (docs/spec/CONTRACT.md §12): claim an external scan (long-polling for one),
// keep its lease alive, fail it, or hand it back. Every call needs `scans:run` and acts only on a
// lease the caller holds: its token's subject, and the claim's leaseId when the call names it.
// Completing a held scan goes through its report (scan-reports.service.ts).
import { requireScope, type Actor } from "../../auth/scopes.ts";
import { viewerTeams, visibleUnderApplicationWhere } from "../access/viewer.ts";
import { conflict, invalid, notFound } from "../../errors.ts";
import type { Application, Scan } from "../../generated/prisma/client.ts";
import { isId } from "../../ids.ts";
import type { ServiceContext } from "../context.ts";
import { bodyObject, parseInput } from "../validation.ts";
import {
  claimForAgent,
  lockHeldScan,
  renewAgentLease,
  requeueHeldScan,
  whyNotHeld,
  type LeaseHolder,
} from "./agent-leases.ts";
import { markFailed } from "./scan-lifecycle.ts";
import {
  claimScanJobQuerySchema,
  claimScanJobSchema,
  failScanJobSchema,
  leaseBodySchema,
} from "./scan-jobs.schemas.ts";

export interface ScanJob {
  scan: Scan;
  application: Application;
  leaseId: string;
  leaseExpiresAt: Date;
}

/** An optional body: absent is `{}`. */
const optionalBody = (body: unknown) => (body === undefined ? {} : bodyObject(body, []));

/**
 * Claims the oldest queued external scan of the given types, waiting up to `waitSeconds` for one
 * (woken by NOTIFY; answered at once when the service stops). `signal` aborts the wait when the
 * caller has gone: a scan claimed just as it went is handed straight back, uncounted.
 */
export async function claimScanJob(
  ctx: ServiceContext,
  body: unknown,
  query: unknown,
  signal?: AbortSignal,
): Promise<ScanJob | null> {
  const actor = requireScope(ctx.actor, "scans:run");
  const input = parseInput(claimScanJobSchema, bodyObject(body, []));
  const { waitSeconds } = parseInput(claimScanJobQuerySchema, query, "Query parameters");
  const notExternal = input.scanTypes.flatMap((type, i) =>
    ctx.settings.externalScanTypes.includes(type) ? [] : [{ type, i }],
  );
  if (notExternal.length > 0) {
    throw invalid(
      "Agents run only the scan types whose engine is external (SCAN_ENGINES)",
      notExternal.map(({ type, i }) => ({
        path: `scanTypes[${i}]`,
        message: `${type} scans are run by the service itself; set SCAN_ENGINES=${type}:external to hand them to agents`,
      })),
    );
  }
  const scanTypes = [...new Set(input.scanTypes)];
  const deadline = Date.now() + waitSeconds * 1000;
  for (;;) {
    const wait = ctx.scanQueue.subscribe();
    const claimed = await claimForAgent(ctx.db, {
      scanTypes,
      owner: actor.sub,
      agent: input.agent,
      leaseSeconds: input.leaseSeconds,
      teams: viewerTeams(actor),
    });
    if (claimed) {
      wait.cancel();
      const { scan, application, leaseId } = claimed;
      if (signal?.aborted) {
        await ctx.db.$transaction(
          async (tx) =>
            (await lockHeldScan(tx, scan.id, { owner: actor.sub, leaseId })) && requeueHeldScan(tx, scan.id),
        );
        return null;
      }
      return { scan, application, leaseId, leaseExpiresAt: scan.leaseExpiresAt! };
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0 || signal?.aborted || ctx.scanQueue.stopped) {
      wait.cancel();
      return null;
    }
    await wait.until(remaining, signal);
  }
}

/** Why the holder has no live lease: 404 for an unknown scan, else 409 saying what became of it. */
async function notHeld(ctx: ServiceContext, actor: Actor, scanId: string, holder: LeaseHolder): Promise<never> {
  const scan = await ctx.db.scan.findFirst({ where: { id: scanId, ...visibleUnderApplicationWhere(actor) } });
  if (!scan) throw notFound("Scan");
  throw conflict(whyNotHeld(scan, holder));
}

/** The lease the caller claims to hold on this scan: its token's subject, and the claim if it names one. */
function holderOf(actor: Actor, scanId: string, leaseId: string | undefined): LeaseHolder {
  if (!isId(scanId)) throw notFound("Scan");
  return { owner: actor.sub, leaseId };
}

/** Extends the caller's live lease by its length: the new expiry; 409 once it is lost. */
export async function heartbeatScanJob(ctx: ServiceContext, scanId: string, body: unknown): Promise<Date> {
  const actor = requireScope(ctx.actor, "scans:run");
  const { leaseId } = parseInput(leaseBodySchema, optionalBody(body));
  const holder = holderOf(actor, scanId, leaseId);
  return (await renewAgentLease(ctx.db, scanId, holder)) ?? notHeld(ctx, actor, scanId, holder);
}

/** Fails the scan the caller holds (scan.failed, `reason` as its failure). */
export async function failScanJob(ctx: ServiceContext, scanId: string, body: unknown): Promise<Scan> {
  const actor = requireScope(ctx.actor, "scans:run");
  const input = parseInput(failScanJobSchema, bodyObject(body, []));
  const holder = holderOf(actor, scanId, input.leaseId);
  const failed = await ctx.db.$transaction(async (tx) =>
    (await lockHeldScan(tx, scanId, holder)) ? markFailed(tx, scanId, input.reason) : null,
  );
  return failed ?? notHeld(ctx, actor, scanId, holder);
}

/** Hands the scan the caller holds back to the queue (an agent stopping), without counting the claim. */
export async function releaseScanJob(ctx: ServiceContext, scanId: string, body: unknown): Promise<Scan> {
  const actor = requireScope(ctx.actor, "scans:run");
  const { leaseId } = parseInput(leaseBodySchema, optionalBody(body));
  const holder = holderOf(actor, scanId, leaseId);
  const released = await ctx.db.$transaction(async (tx) =>
    (await lockHeldScan(tx, scanId, holder)) ? requeueHeldScan(tx, scanId) : null,
  );
  return released ?? notHeld(ctx, actor, scanId, holder);
}
