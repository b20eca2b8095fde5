// The scan-job lease API for agents (docs/spec/CONTRACT.md §12). Agents complete what they claimed through the
// report route (scan-reports.routes.ts), which takes `scans:run` for a scan the caller holds.
import type Koa from "koa";
import { z } from "zod";
import { applicationViewSchema, toApplicationView } from "../../domain/applications/application.view.ts";
import {
  claimScanJobQuerySchema,
  claimScanJobSchema,
  failScanJobSchema,
  leaseBodySchema,
} from "../../domain/scans/scan-jobs.schemas.ts";
import * as scanJobs from "../../domain/scans/scan-jobs.service.ts";
import { scanViewSchema, toScanView } from "../../domain/scans/scan.view.ts";
import { readJsonBody } from "../json-body.ts";
import { singleQuery } from "../list-response.ts";
import type { RouteDefinition } from "../route.ts";

const tag = "Scan jobs";

const leaseSchema = z.object({ leaseExpiresAt: z.iso.datetime() });

const scanJobSchema = z
  .object({
    scan: scanViewSchema,
    application: applicationViewSchema,
    leaseExpiresAt: z.iso.datetime(),
    leaseId: z
      .uuid()
      .describe("This claim's id: name it in heartbeat, fail, release and the report's ?leaseId= (extension)"),
  })
  .meta({ id: "ScanJob" });

/** Aborts when the client goes away before its answer is written (a long poll it gave up on). */
function clientGone(ctx: Koa.Context): AbortSignal {
  const controller = new AbortController();
  ctx.res.once("close", () => {
    if (!ctx.res.writableFinished) controller.abort();
  });
  return controller.signal;
}

export const scanJobRoutes: RouteDefinition[] = [
  {
    operationId: "ClaimScanJob",
    method: "POST",
    path: "/scan-jobs/claim",
    summary: "Claim the oldest queued scan of an external type for an agent (extension)",
    description:
      "200 with the scan (now running, scan.started), its application and the lease; 204 when there is none. " +
      "With waitSeconds, waits up to that long for one. Agents racing never get the same scan.",
    tag,
    scope: "scans:run",
    query: z.object({
      waitSeconds: claimScanJobQuerySchema.shape.waitSeconds.describe(
        "Long-poll: wait up to this many seconds (0–30) for a scan",
      ),
    }),
    body: claimScanJobSchema,
    success: {
      status: 200,
      description: "The claimed scan",
      schema: scanJobSchema,
      orNoContent: "No scan of those types is queued (after waitSeconds)",
    },
    errors: [400, 413, 415],
    async handle(ctx, svc) {
      const job = await scanJobs.claimScanJob(
        svc,
        await readJsonBody(ctx),
        { waitSeconds: singleQuery(ctx, "waitSeconds") },
        clientGone(ctx),
      );
      if (!job) {
        ctx.status = 204;
        return;
      }
      ctx.body = {
        scan: toScanView(job.scan),
        application: toApplicationView(job.application),
        leaseExpiresAt: job.leaseExpiresAt.toISOString(),
        leaseId: job.leaseId,
      };
    },
  },
  {
    operationId: "HeartbeatScanJob",
    method: "POST",
    path: "/scan-jobs/{scanId}/heartbeat",
    summary: "Extend the lease of a claimed scan by its length (extension)",
    description:
      "409 when the scan is no longer running or the caller's lease on it was lost (lapsed, released, or claimed again).",
    tag,
    scope: "scans:run",
    body: leaseBodySchema,
    bodyOptional: true,
    success: { status: 200, description: "The lease's new expiry", schema: leaseSchema },
    errors: [400, 404, 409, 413, 415],
    async handle(ctx, svc) {
      const expiresAt = await scanJobs.heartbeatScanJob(svc, ctx.params.scanId!, await readJsonBody(ctx));
      ctx.body = { leaseExpiresAt: expiresAt.toISOString() };
    },
  },
  {
    operationId: "FailScanJob",
    method: "POST",
    path: "/scan-jobs/{scanId}/fail",
    summary: "Fail a claimed scan, with the reason (extension)",
    description:
      "scan.failed; the reason becomes the scan's failure.reason. 409 when the caller does not hold the scan's lease.",
    tag,
    scope: "scans:run",
    body: failScanJobSchema,
    success: { status: 200, description: "The failed scan", schema: scanViewSchema },
    errors: [400, 404, 409, 413, 415],
    async handle(ctx, svc) {
      ctx.body = toScanView(await scanJobs.failScanJob(svc, ctx.params.scanId!, await readJsonBody(ctx)));
    },
  },
  {
    operationId: "ReleaseScanJob",
    method: "POST",
    path: "/scan-jobs/{scanId}/release",
    summary: "Hand a claimed scan back to the queue, e.g. when the agent stops (extension)",
    description:
      "The scan is queued again for any agent, and the claim does not count as a lapsed lease. 409 when the caller does not hold its lease.",
    tag,
    scope: "scans:run",
    body: leaseBodySchema,
    bodyOptional: true,
    success: { status: 200, description: "The scan, queued again", schema: scanViewSchema },
    errors: [400, 404, 409, 413, 415],
    async handle(ctx, svc) {
      ctx.body = toScanView(await scanJobs.releaseScanJob(svc, ctx.params.scanId!, await readJsonBody(ctx)));
    },
  },
];
