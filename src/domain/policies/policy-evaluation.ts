// How policies judge an application (docs/spec/CONTRACT.md §6), in one place: the scan runner emits
// policy.violated from it when a scan completes, and the CI gate answers with it.
import { requireScope } from "../../auth/scopes.ts";
import type { Db, Tx } from "../../db/client.ts";
import type { Policy, PolicyAction, Severity } from "../../generated/prisma/client.ts";
import { isId } from "../../ids.ts";
import { requireApplication } from "../applications/require-application.ts";
import type { ServiceContext } from "../context.ts";
import { slaEvaluatorOf, type SlaSubject } from "../sla/sla.service.ts";
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

type ApplicablePolicy = Pick<
  Policy,
  "id" | "name" | "action" | "vulnerabilitySeverity" | "slaBreached" | "allApplications" | "applicationIds"
>;
type LiveVulnerability = { id: string; severity: Severity; breached: boolean };

/** What the live vulnerabilities are read with: what their SLA state is computed from. */
const LIVE = {
  id: true,
  severity: true,
  status: true,
  slaClockBase: true,
  resolvedAt: true,
  applicationId: true,
} as const;

const appliesTo = (policy: ApplicablePolicy, applicationId: string) =>
  policy.allApplications || policy.applicationIds.includes(applicationId);

/** The verdict of the policies that apply to an application on its live (open, in_progress) vulnerabilities, ids ascending. */
function judge(
  applicationId: string,
  policies: readonly ApplicablePolicy[],
  vulnerabilities: readonly LiveVulnerability[],
): PolicyEvaluation {
  const violations: PolicyViolation[] = [];
  let allowMatches = false;
  for (const policy of policies) {
    if (!appliesTo(policy, applicationId)) continue;
    const threshold = policy.vulnerabilitySeverity;
    const matching = vulnerabilities
      .filter((v) => (!threshold || atLeast(v.severity, threshold)) && (!policy.slaBreached || v.breached))
      .map((v) => v.id);
    if (matching.length === 0) continue;
    if (policy.action === "allow") allowMatches = true;
    else
      violations.push({
        policyId: policy.id,
        policyName: policy.name,
        action: policy.action,
        vulnerabilityIds: matching,
      });
  }

  const blocked = violations.some((v) => v.action === "block") && !allowMatches;
  const decision: Decision = blocked ? "block" : violations.length > 0 ? "warn" : "pass";
  return { applicationId, decision, violations };
}

/**
 * The vulnerabilities with whether each is past its deadline: computed (the SLA and the
 * applications' criticalities read) only when a policy asks (`slaBreached`).
 */
async function withBreaches<V extends SlaSubject & { id: string }>(
  db: Db | Tx,
  policies: readonly ApplicablePolicy[],
  vulnerabilities: readonly V[],
): Promise<(V & { breached: boolean })[]> {
  if (!policies.some((p) => p.slaBreached) || vulnerabilities.length === 0)
    return vulnerabilities.map((v) => ({ ...v, breached: false }));
  const slaOf = await slaEvaluatorOf(db, [...new Set(vulnerabilities.map((v) => v.applicationId))]);
  return vulnerabilities.map((v) => ({ ...v, breached: slaOf(v).state === "breached" }));
}

const POLICY_ORDER = [{ createdAt: "asc" }, { id: "asc" }] as const;

/** Evaluates every policy that applies to the application against its live vulnerabilities. */
export async function evaluatePolicies(db: Db | Tx, applicationId: string): Promise<PolicyEvaluation> {
  // Sequential on purpose: inside a transaction both queries share one connection.
  const policies = await db.policy.findMany({
    where: { OR: [{ allApplications: true }, { applicationIds: { has: applicationId } }] },
    orderBy: [...POLICY_ORDER],
  });
  const vulnerabilities = await db.vulnerability.findMany({
    where: { applicationId, status: { in: ["open", "in_progress"] } },
    select: LIVE,
    orderBy: { id: "asc" },
  });
  return judge(applicationId, policies, await withBreaches(db, policies, vulnerabilities));
}

/**
 * The same verdict for many applications in two statements whatever their number (GraphQL's
 * Application.policyEvaluation under a list of applications), for applications the caller has
 * read already (an id with no application is judged as one with no vulnerabilities).
 */
export async function getPolicyEvaluations(
  ctx: ServiceContext,
  applicationIds: readonly string[],
): Promise<Map<string, PolicyEvaluation>> {
  requireScope(ctx.actor, "policies:read");
  const ids = applicationIds.filter(isId);
  if (ids.length === 0) return new Map();
  const [policies, vulnerabilities] = await Promise.all([
    ctx.db.policy.findMany({
      where: { OR: [{ allApplications: true }, { applicationIds: { hasSome: ids } }] },
      orderBy: [...POLICY_ORDER],
    }),
    ctx.db.vulnerability.findMany({
      where: { applicationId: { in: ids }, status: { in: ["open", "in_progress"] } },
      select: LIVE,
      orderBy: { id: "asc" },
    }),
  ]);
  const live = new Map<string, LiveVulnerability[]>(ids.map((id) => [id, []]));
  for (const v of await withBreaches(ctx.db, policies, vulnerabilities)) live.get(v.applicationId)?.push(v);
  return new Map(ids.map((id) => [id, judge(id, policies, live.get(id)!)]));
}

/** The CI gate: GET /applications/{id}/policy-evaluation. */
export async function getPolicyEvaluation(ctx: ServiceContext, applicationId: string): Promise<PolicyEvaluation> {
  const actor = requireScope(ctx.actor, "policies:read");
  await requireApplication(ctx.db, actor, applicationId);
  return evaluatePolicies(ctx.db, applicationId);
}
