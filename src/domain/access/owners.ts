// Who may give an application which owner (docs/spec/CONTRACT.md §17): a confined caller only one of
// its own teams, an org-wide caller any owner or none.
import type { Actor } from "../../auth/scopes.ts";
import { invalid, outsideTeams } from "../../errors.ts";
import { viewerTeams } from "./viewer.ts";

/** The owner a new application gets: the one asked for, else the caller's one team. */
export function ownerOnCreate(actor: Actor, requested: string | null | undefined): string | null {
  const teams = viewerTeams(actor);
  if (teams === null) return requested ?? null;
  if (requested === undefined) {
    if (teams.length === 1) return teams[0]!;
    if (teams.length === 0) throw outsideTeams("This token has no team to own an application");
    throw invalid("Name the owner: this token has several teams", [
      { path: "owner", message: `Must be one of ${teams.join(", ")}` },
    ]);
  }
  requireOwnTeam(teams, requested);
  return requested;
}

/** A new owner on update: one of the caller's teams unless it is org-wide. */
export function requireOwnerChangeAllowed(actor: Actor, owner: string | null): void {
  const teams = viewerTeams(actor);
  if (teams !== null) requireOwnTeam(teams, owner);
}

function requireOwnTeam(teams: readonly string[], owner: string | null): void {
  if (owner === null) throw outsideTeams("Only an org-wide token may leave an application without owner");
  if (!teams.includes(owner)) throw outsideTeams(`The owner must be one of this token's teams: ${teams.join(", ")}`);
}
