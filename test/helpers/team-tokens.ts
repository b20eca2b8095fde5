// Tokens of a team's members (docs/spec/CONTRACT.md §17), for an app started with AUTH_TEAMS_CLAIM=teams.
import { mintToken } from "../../src/auth/mint-token.ts";
import { SCOPES } from "../../src/auth/scopes.ts";
import { TEST_JWT_SECRET } from "./test-app.ts";

/** A token of `teams` with `scopes` (default: every scope but admin, which would make it org-wide). */
export const teamToken = (teams: string[], scopes: readonly string[] = SCOPES, sub = `member-of-${teams.join("+")}`) =>
  mintToken({ secret: TEST_JWT_SECRET, sub, scopes: [...scopes], teams });
