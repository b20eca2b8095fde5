// Which policies a caller reads and changes (docs/spec/CONTRACT.md §17). A policy naming applications
// belongs to the tokens that see every one of them; one for every application (or for none) is the
// organisation's: everyone reads it, only org-wide tokens change it.
import type { Actor } from "../../auth/scopes.ts";
import type { Db, Tx } from "../../db/client.ts";
import { notFound, outsideTeams } from "../../errors.ts";
import type { Policy } from "../../generated/prisma/client.ts";
import { viewerTeams, type EventAudience } from "../access/viewer.ts";

export const isOrganisationPolicy = (policy: Pick<Policy, "allApplications" | "applicationIds">): boolean =>
  policy.allApplications || policy.applicationIds.length === 0;

/** The Prisma condition on policies `actor` sees (a lookup of their ids when it is confined). */
export async function visiblePoliciesWhere(db: Db | Tx, actor: Actor): Promise<{ id?: { in: string[] } }> {
  const teams = viewerTeams(actor);
  if (teams === null) return {};
  const rows = await db.$queryRaw<{ id: string }[]>`
    SELECT p.id::text AS id FROM policies p
     WHERE p.all_applications OR cardinality(p.application_ids) = 0 OR NOT EXISTS (
       SELECT 1 FROM unnest(p.application_ids) AS i(id) LEFT JOIN applications a ON a.id = i.id
        WHERE a.owner IS NULL OR NOT a.owner = ANY(${[...teams]}::text[]))`;
  return { id: { in: rows.map((r) => r.id) } };
}

/** A policy `actor` may change: 404 when it cannot see it, 403 for the organisation's unless org-wide. */
export function requireChangeable(actor: Actor, policy: Policy | null): Policy {
  if (!policy) throw notFound("Policy");
  if (viewerTeams(actor) !== null && isOrganisationPolicy(policy)) {
    throw outsideTeams("Only an org-wide token may change a policy for every application");
  }
  return policy;
}

/** A confined caller's policy must name applications (of its teams): one for every application, or none, is 403. */
export function requireTeamConditions(actor: Actor, applicationIds: readonly string[] | null | undefined): void {
  if (viewerTeams(actor) !== null && !applicationIds?.length) {
    throw outsideTeams("Only an org-wide token may write a policy for every application; name your applications");
  }
}

/**
 * Who sees a policy's events: everyone for the organisation's; for one naming applications, the
 * tokens of all their teams; org-wide tokens only when one of them has no owner.
 */
export async function policyAudience(db: Db | Tx, policy: Policy): Promise<EventAudience> {
  if (isOrganisationPolicy(policy)) return { teams: [], teamsAll: true };
  const rows = await db.$queryRaw<{ owner: string | null }[]>`
    SELECT owner FROM applications WHERE id = ANY(${policy.applicationIds}::uuid[])`;
  const owners = rows.map((r) => r.owner);
  if (owners.length < policy.applicationIds.length || owners.includes(null)) return { teams: null, teamsAll: false };
  return { teams: [...new Set(owners as string[])].sort(), teamsAll: true };
}
