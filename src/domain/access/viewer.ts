// What a caller may see (docs/spec/CONTRACT.md §17), decided here and nowhere else. A token sees an
// application when the application's owner is one of its teams, or when it is org-wide (team access
// off, scope admin, or one of AUTH_ORG_WIDE_TEAMS); everything under an application goes with it.
//
// Why a new door cannot skip this:
//   - Everything under an application is reached through its id, and every service that takes one
//     starts with requireApplication (applications/require-application.ts), which answers 404 for an
//     application the caller may not see. The few reads that span applications (lists, counts, the
//     GraphQL vulnerability list, policies) embed the predicates below in their one statement.
//   - Events carry the teams that may see them from the moment they are written (events/outbox.ts);
//     the log, every subscription and SSE stream, and the webhook fan-out filter on those columns
//     with the one SQL test visible_to (migration 20261202100000_teams) or its twin eventVisibleTo.
//   - test/integration/every-door.test.ts walks every route of /openapi.json and every root field of
//     the GraphQL schema with another team's ids, generated from the document and the schema: a door
//     added later is tried without anyone remembering to add it.
import type { Actor } from "../../auth/scopes.ts";

/** A viewer: the teams whose applications it sees, or null when it sees every application. */
export type ViewerTeams = readonly string[] | null;

export function viewerTeams(actor: Actor): ViewerTeams {
  return actor.orgWide ? null : (actor.teams ?? []);
}

/** The Prisma condition on applications that `actor` sees. */
export function visibleApplicationsWhere(actor: Actor): { owner?: { in: string[] } } {
  const teams = viewerTeams(actor);
  return teams === null ? {} : { owner: { in: [...teams] } };
}

/** The Prisma condition on rows under an application (scans, vulnerabilities) that `actor` sees. */
export function visibleUnderApplicationWhere(actor: Actor): { application?: { owner: { in: string[] } } } {
  const teams = viewerTeams(actor);
  return teams === null ? {} : { application: { owner: { in: [...teams] } } };
}

/** The teams that may see an event, as its row stores them (migration 20261202100000_teams). */
export interface EventAudience {
  /** null: org-wide viewers only. */
  teams: readonly string[] | null;
  /** A viewer needs every one of `teams` (else any one). */
  teamsAll: boolean;
}

/** visible_to in TypeScript, for events already read (the subscriptions of one instance). */
export function eventVisibleTo(audience: EventAudience, viewer: ViewerTeams): boolean {
  if (viewer === null) return true;
  const { teams, teamsAll } = audience;
  if (teams === null) return false;
  return teamsAll ? teams.every((t) => viewer.includes(t)) : teams.some((t) => viewer.includes(t));
}

/** The audience of an application's events: its owner's team (none: org-wide viewers only). */
export const applicationAudience = (...owners: (string | null)[]): EventAudience => {
  const teams = [...new Set(owners.filter((o): o is string => o !== null))];
  return { teams: teams.length ? teams : null, teamsAll: false };
};

const seesEveryEvent = (): boolean => true;

/**
 * eventVisibleTo(audience, viewer) as a test made once per viewer, for streams that try every event
 * of the log: a set of the viewer's teams, and no allocation per event.
 */
export function eventVisibility(viewer: ViewerTeams): (audience: EventAudience) => boolean {
  if (viewer === null) return seesEveryEvent;
  const mine = new Set(viewer);
  return ({ teams, teamsAll }) => {
    if (teams === null) return false;
    // All of them: the first one missing decides; any of them: the first one present does.
    for (const team of teams) if (mine.has(team) !== teamsAll) return !teamsAll;
    return teamsAll;
  };
}
