// npm run token -- --scope "applications:read scans:write" --sub alice [--teams team-a,team-b] [--expires 1h]
// Mints a token with AUTH_JWT_SECRET, or with the development secret under .data/ (the one the
// zero-setup server uses).
import path from "node:path";
import { parseArgs } from "node:util";
import { mintToken } from "../auth/mint-token.ts";
import { ConfigError, loadConfig } from "../config.ts";
import { loadOrCreateDevJwtSecret } from "../dev-keys.ts";

const { values } = parseArgs({
  options: {
    scope: { type: "string", multiple: true, default: [] },
    sub: { type: "string", default: "cli-user" },
    expires: { type: "string", default: "12h" },
    /** The caller's teams, under AUTH_TEAMS_CLAIM (or `teams`): comma-separated, or repeated. */
    teams: { type: "string", multiple: true },
  },
});
let config;
try {
  config = loadConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(err.message);
  process.exit(2);
}
if (config.NODE_ENV === "production" && !config.AUTH_JWT_SECRET) {
  console.error("No AUTH_JWT_SECRET: in production tokens come from your identity provider.");
  process.exit(2);
}
const scopes = values.scope.flatMap((s) => s.split(/[\s,]+/)).filter(Boolean);
if (!scopes.length) {
  console.error('Give at least one --scope, e.g. --scope admin or --scope "applications:read scans:write"');
  process.exit(2);
}
const secret = config.AUTH_JWT_SECRET ?? loadOrCreateDevJwtSecret(path.resolve(".data"));
console.log(
  await mintToken({
    secret,
    sub: values.sub,
    scopes,
    expiresIn: values.expires,
    issuer: config.AUTH_ISSUER,
    audience: config.AUTH_AUDIENCE,
    teams: values.teams
      ?.flatMap((t) => t.split(","))
      .map((t) => t.trim())
      .filter(Boolean),
    teamsClaim: config.AUTH_TEAMS_CLAIM,
  }),
);
