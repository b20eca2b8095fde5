// Application.policyEvaluation: the CI gate of GET /applications/{id}/policy-evaluation on the
// application type, batched so a list of applications costs two statements for all of them.
import {
  getPolicyEvaluations,
  type PolicyEvaluation,
  type PolicyViolation,
} from "../../domain/policies/policy-evaluation.ts";
import { builder } from "../builder.ts";
import { PolicyActionEnum, upperCaseEnum } from "./enums.ts";

const PolicyDecisionEnum = upperCaseEnum("PolicyDecision", ["pass", "warn", "block"]);

const PolicyViolationRef = builder.objectRef<PolicyViolation>("PolicyViolation").implement({
  fields: (t) => ({
    policyId: t.exposeID("policyId"),
    policyName: t.exposeString("policyName"),
    action: t.field({ type: PolicyActionEnum, resolve: (v) => v.action }),
    vulnerabilityIds: t.exposeIDList("vulnerabilityIds", {
      description: "The open or in-progress vulnerabilities at or above the policy's threshold",
    }),
  }),
});

const PolicyEvaluationRef = builder.objectRef<PolicyEvaluation>("PolicyEvaluation").implement({
  description:
    "The policies' verdict on an application's open vulnerabilities, as GET /applications/{id}/policy-evaluation.",
  fields: (t) => ({
    applicationId: t.exposeID("applicationId"),
    decision: t.field({
      type: PolicyDecisionEnum,
      description:
        "BLOCK when a block policy matches and no allow policy does; else WARN when a block or monitor policy matches; else PASS.",
      resolve: (e) => e.decision,
    }),
    violations: t.field({ type: [PolicyViolationRef], resolve: (e) => e.violations }),
  }),
});

builder.prismaObjectFields("Application", (t) => ({
  policyEvaluation: t.field({
    type: PolicyEvaluationRef,
    description: "The release gate: how the policies judge the application now (needs policies:read).",
    resolve: (app, _args, ctx) =>
      ctx.batch.get(
        "policyEvaluation",
        null,
        (ids: readonly string[]) => getPolicyEvaluations(ctx.service, ids),
        () => {
          throw new Error("policy evaluation missing from its batch");
        },
      )(app.id),
  }),
}));
