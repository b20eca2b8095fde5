import { z } from "zod";
import { getPolicyEvaluation } from "../../domain/policies/policy-evaluation.ts";
import type { RouteDefinition } from "../route.ts";

const policyEvaluationSchema = z
  .object({
    applicationId: z.string(),
    decision: z.enum(["pass", "warn", "block"]),
    violations: z.array(
      z.object({
        policyId: z.string(),
        policyName: z.string(),
        action: z.enum(["block", "monitor"]),
        vulnerabilityIds: z.array(z.string()),
      }),
    ),
  })
  .meta({ id: "PolicyEvaluation" });

export const policyEvaluationRoutes: RouteDefinition[] = [
  {
    operationId: "GetApplicationPolicyEvaluation",
    method: "GET",
    path: "/applications/{id}/policy-evaluation",
    summary: "CI gate: the policies' verdict on the application's open vulnerabilities (extension)",
    description:
      "block when a block policy matches and no allow policy does; else warn when a block or monitor policy matches; else pass.",
    tag: "Policies",
    scope: "policies:read",
    success: { status: 200, description: "The verdict", schema: policyEvaluationSchema },
    errors: [404],
    async handle(ctx, svc) {
      ctx.body = await getPolicyEvaluation(svc, ctx.params.id!);
    },
  },
];
