import {
  remediationMetrics,
  remediationMetricsViewSchema,
  remediationQuerySchema,
  toRemediationMetricsView,
} from "../../domain/sla/remediation-metrics.ts";
import { slaDocumentSchema } from "../../domain/sla/sla.schemas.ts";
import * as sla from "../../domain/sla/sla.service.ts";
import { readJsonBody } from "../json-body.ts";
import { singleQuery } from "../list-response.ts";
import type { RouteDefinition } from "../route.ts";

const tag = "Remediation";

export const slaRoutes: RouteDefinition[] = [
  {
    operationId: "GetSla",
    method: "GET",
    path: "/sla",
    summary: "The remediation SLA: days per severity, overrides per application criticality (extension)",
    description:
      "How many days a vulnerability of each severity may stay open before it is overdue, with overrides per application criticality.",
    tag,
    scope: "vulnerabilities:read",
    success: { status: 200, description: "The SLA in force", schema: slaDocumentSchema },
    errors: [],
    async handle(ctx, svc) {
      ctx.body = await sla.getSla(svc);
    },
  },
  {
    operationId: "ReplaceSla",
    method: "PUT",
    path: "/sla",
    summary: "Replace the remediation SLA (extension)",
    description:
      "The whole document: what it omits takes the defaults. Every vulnerability's deadline moves at once, its breach included. Org-wide tokens only (CONTRACT §17, §19).",
    tag,
    scope: "policies:write",
    body: slaDocumentSchema,
    success: { status: 200, description: "The SLA now in force", schema: slaDocumentSchema },
    errors: [400, 413, 415],
    async handle(ctx, svc) {
      ctx.body = await sla.replaceSla(svc, await readJsonBody(ctx));
    },
  },
  {
    operationId: "GetRemediationMetrics",
    method: "GET",
    path: "/remediation-metrics",
    summary:
      "Remediation metrics per severity: resolved, time to remediate, share within the SLA, open by age, breached (extension)",
    description:
      "Over the period (default the last 90 days): each resolution in it. Now: the open and in-progress ones. For the portfolio, a team (owner) or an application, within what the token sees (CONTRACT §17, §19).",
    tag,
    scope: "vulnerabilities:read",
    query: remediationQuerySchema,
    success: { status: 200, description: "The metrics", schema: remediationMetricsViewSchema },
    errors: [400, 404],
    async handle(ctx, svc) {
      const query = Object.fromEntries(
        ["from", "to", "applicationId", "owner"].map((name) => [name, singleQuery(ctx, name)]),
      );
      ctx.body = toRemediationMetricsView(await remediationMetrics(svc, query));
    },
  },
];
