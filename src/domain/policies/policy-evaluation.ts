// How policies judge an application (CONTRACT §6), in one place: the scan runner emits
// policy.violated from it when a scan completes, and the CI gate answers with it.
import { requireScope } from "../../auth/scopes.ts";
import type { Db, Tx } from "../../db/client.ts";
import type { PolicyAction } from "../../generated/prisma/client.ts";
import { requireApplication } from "../applications/require-application.ts";
import type { ServiceContext } from "../context.ts";
import { atLeast } from "../validation.ts";

export type Decision = "pass" | "warn" | "block";

export interface PolicyViolation {
  policyId: string;
  policyName: string;
  action: Exclude<PolicyAction, "allow">;
  /** The application's open or in_progress vulnerabilities at or above the policy's threshold. */
  vulnerabilityIds: string[];
}

export interface PolicyEvaluation {
  applicationId: string;
  decision: Decision;
  violations: PolicyViolation[];
}

/** Evaluates every policy that applies to the application against its live vulnerabilities. */
export async function evaluatePolicies(db: Db | Tx, applicationId: string): Promise<PolicyEvaluation> {
  // Sequential on purpose: inside a transaction both queries share one connection.
  const policies = await db.policy.findMany({
    where: { OR: [{ allApplications: true }, { applicationIds: { has: applicationId } }] },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  const vulnerabilities = await db.vulnerability.findMany({
    where: { applicationId, status: { in: ["open", "in_progress"] } },
    select: { id: true, severity: true },
    orderBy: { id: "asc" },
  });

  const violations: PolicyViolation[] = [];
  let allowMatches = false;
  for (const policy of policies) {
    const threshold = policy.vulnerabilitySeverity;
    const matching = vulnerabilities.filter((v) => !threshold || atLeast(v.severity, threshold)).map((v) => v.id);
    if (matching.length === 0) continue;
    if (policy.action === "allow") allowMatches = true;
    else violations.push({ policyId: policy.id, policyName: policy.name, action: policy.action, vulnerabilityIds: matching });
  }

  const blocked = violations.some((v) => v.action === "block") && !allowMatches;
  const decision: Decision = blocked ? "block" : violations.length > 0 ? "warn" : "pass";
  return { applicationId, decision, violations };
}

/** The CI gate: GET /applications/{id}/policy-evaluation. */
export async function getPolicyEvaluation(ctx: ServiceContext, applicationId: string): Promise<PolicyEvaluation> {
  requireScope(ctx.actor, "policies:read");
  await requireApplication(ctx.db, applicationId);
  return evaluatePolicies(ctx.db, applicationId);
}
