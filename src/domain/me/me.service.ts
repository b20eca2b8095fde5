// Who the caller is, as the service sees its token (docs/spec/CONTRACT.md §17): `GET /me` and
// GraphQL `me`. Any valid token may ask; it needs no scope.
import { requireActor } from "../../auth/scopes.ts";
import type { ServiceContext } from "../context.ts";

export interface Me {
  sub: string;
  /** As the token grants them (`admin` not expanded). */
  scopes: string[];
  /** The token's teams, `[]` when it has none; null when team access is off. */
  teams: string[] | null;
  /** Whether the token sees every application. */
  orgWide: boolean;
}

export function getMe(ctx: ServiceContext): Me {
  const actor = requireActor(ctx.actor);
  return {
    sub: actor.sub,
    scopes: [...actor.scopes],
    teams: actor.teams && [...actor.teams],
    orgWide: actor.orgWide,
  };
}
