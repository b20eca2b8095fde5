import { z } from "zod";
import { scanViewSchema, toScanView } from "../../domain/scans/scan.view.ts";
import { triggerScanSchema } from "../../domain/scans/scans.schemas.ts";
import * as scans from "../../domain/scans/scans.service.ts";
import { readJsonBody } from "../json-body.ts";
import { pageQueryShape, pageRequestOf, sendPage } from "../list-response.ts";
import type { RouteDefinition } from "../route.ts";
import { READ_ONLY_FIELDS } from "../../domain/validation.ts";

const tag = "Scans";

export const scanRoutes: RouteDefinition[] = [
  {
    operationId: "ListApplicationScans",
    method: "GET",
    path: "/applications/{id}/scans",
    summary: "List an application's scans, newest first",
    description: "The application's scans, newest first, in pages of `limit` with a `Link` header to the next one.",
    tag,
    scope: "scans:read",
    query: z.object(pageQueryShape),
    success: { status: 200, description: "A page of scans", schema: z.array(scanViewSchema), headers: ["Link"] },
    errors: [400, 404],
    async handle(ctx, svc) {
      const page = pageRequestOf(ctx);
      sendPage(ctx, await scans.listScans(svc, ctx.params.id!, page), page.limit, toScanView);
    },
  },
  {
    operationId: "TriggerApplicationScan",
    method: "POST",
    path: "/applications/{id}/scans",
    summary: "Queue a scan (409 while one of the same type is queued or running)",
    description: "The scan is queued, not done: follow Location until its status is completed or failed.",
    tag,
    scope: "scans:write",
    body: triggerScanSchema,
    bodyReadOnly: READ_ONLY_FIELDS,
    success: { status: 202, description: "The queued scan", schema: scanViewSchema, headers: ["Location"] },
    errors: [400, 404, 409, 413, 415],
    async handle(ctx, svc) {
      const scan = await scans.triggerScan(svc, ctx.params.id!, await readJsonBody(ctx));
      ctx.status = 202;
      ctx.set("Location", `/applications/${scan.applicationId}/scans/${scan.id}`);
      ctx.body = toScanView(scan);
    },
  },
  {
    operationId: "GetApplicationScan",
    method: "GET",
    path: "/applications/{id}/scans/{scanId}",
    summary: "Get one scan (extension)",
    description: "One scan of the application, with its status, timings and counts of the vulnerabilities it found.",
    tag,
    scope: "scans:read",
    success: { status: 200, description: "The scan", schema: scanViewSchema },
    errors: [404],
    async handle(ctx, svc) {
      ctx.body = toScanView(await scans.getScan(svc, ctx.params.id!, ctx.params.scanId!));
    },
  },
];
