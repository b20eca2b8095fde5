// The teams of a webhook subscription (docs/spec/CONTRACT.md §17): it receives the events of those
// teams' applications (the fan-out's visible_to, migration 20261202100000_teams), and a confined
// token reaches only subscriptions all of whose teams are its own. Stored as an array, sorted, empty
// for a subscription of every application (which only org-wide tokens reach).
import type { Actor } from "../../auth/scopes.ts";
import { DomainError } from "../../errors.ts";
import { viewerTeams, type ViewerTeams } from "../access/viewer.ts";

/** Whether `viewer` reaches a subscription of `teams` (as stored). */
export const webhookVisibleTo = (teams: readonly string[], viewer: ViewerTeams): boolean =>
  viewer === null || (teams.length > 0 && teams.every((team) => viewer.includes(team)));

/** The SQL condition of webhookVisibleTo for a confined viewer, whose teams are the parameter `viewer`. */
export const webhookVisibleSql = (viewer: string): string => `teams <> '{}' AND teams <@ ${viewer}::text[]`;

/** The teams as responses show them: null for every application. */
export const teamsView = (teams: readonly string[]): string[] | null => (teams.length ? [...teams].sort() : null);

const notYours = () =>
  new DomainError("forbidden", "A subscription of a confined token names some of its own teams, and only those");

/**
 * The teams to store for a subscription `actor` asks for: `requested` as the input schema left it
 * (null: every application), or, when absent, its default (the caller's teams, or every application
 * for an org-wide caller). 403 for a confined caller naming a team not its own or every application.
 * An org-wide caller may name any teams, team access on or off: the subscription then receives only
 * the events of applications those teams own.
 */
export function teamsToStore(actor: Actor, requested: readonly string[] | null | undefined): string[] {
  const viewer = viewerTeams(actor);
  const teams = requested === undefined ? (viewer ?? []) : (requested ?? []);
  if (viewer !== null && (teams.length === 0 || !teams.every((team) => viewer.includes(team)))) throw notYours();
  return [...new Set(teams)].sort();
}
