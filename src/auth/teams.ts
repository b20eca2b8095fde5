// The caller's teams, from the token claim AUTH_TEAMS_CLAIM names (docs/spec/CONTRACT.md §17): an
// array of strings, or a single string for one team. Team access off (no claim configured): every
// token is org-wide, as in §1.

export interface TeamSettings {
  /** The claim listing the caller's teams (`teams`, `groups`); unset, team access is off. */
  claim?: string;
  /** Teams whose members see every application (AUTH_ORG_WIDE_TEAMS). */
  orgWideTeams: readonly string[];
}

/** What a token may see: its teams (null when team access is off), and whether it sees everything. */
export interface TeamAccess {
  teams: readonly string[] | null;
  orgWide: boolean;
}

export class InvalidTeamsClaim extends Error {}

/**
 * The access `payload` grants (`admin`: the token has scope admin, which is org-wide); throws
 * InvalidTeamsClaim when the claim is neither a string nor an array of strings.
 */
export function teamAccessOf(payload: Record<string, unknown>, admin: boolean, settings: TeamSettings): TeamAccess {
  if (!settings.claim) return { teams: null, orgWide: true };
  const claimed = payload[settings.claim];
  let teams: string[];
  if (claimed === undefined) teams = [];
  else if (typeof claimed === "string") teams = [claimed];
  else if (Array.isArray(claimed) && claimed.every((team) => typeof team === "string")) teams = [...new Set(claimed)];
  else throw new InvalidTeamsClaim(`The ${settings.claim} claim is not a string or an array of strings`);
  teams = teams.filter((team) => team !== "");
  const orgWide = admin || teams.some((team) => settings.orgWideTeams.includes(team));
  return { teams, orgWide };
}
