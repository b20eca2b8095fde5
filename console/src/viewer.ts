// Who the session's token is (GraphQL `me`, docs/spec/CONTRACT.md §17): its subject, and which
// teams' applications it sees. Asked once per session: a token's teams do not change while it is
// used, so every view that needs them reads the answer from the client's cache.
import { useQuery } from "@urql/preact";
import { graphql, type ResultOf } from "./graphql.ts";

const ViewerQuery = graphql(`
  query Viewer {
    me {
      sub
      teams
      orgWide
    }
  }
`);

export type Viewer = ResultOf<typeof ViewerQuery>["me"];

export function useViewer() {
  const [result] = useQuery({ query: ViewerQuery, requestPolicy: "cache-first" });
  return result;
}

/** Whether team access is on and the viewer sees more than one team's applications. */
export const seesSeveralTeams = (viewer: Viewer): boolean =>
  viewer.teams !== null && (viewer.orgWide || viewer.teams.length > 1);
