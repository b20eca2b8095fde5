// The caller's teams from its token (docs/spec/CONTRACT.md §17), through the verifier.
import { SignJWT } from "jose";
import { createTokenVerifier, InvalidTokenError } from "../../src/auth/verify-token.ts";

const SECRET = "a-test-secret-of-at-least-32-characters!";
const teams = { claim: "groups", orgWideTeams: ["appsec"] };
const verify = createTokenVerifier({ jwtSecret: SECRET, teams });
const off = createTokenVerifier({ jwtSecret: SECRET });

const token = (claims: Record<string, unknown>) =>
  new SignJWT({ scope: "applications:read", ...claims })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject("alice")
    .setExpirationTime("1h")
    .sign(new TextEncoder().encode(SECRET));
const accessOf = async (claims: Record<string, unknown>, verifier = verify) => {
  const { teams, orgWide } = await verifier(`Bearer ${await token(claims)}`);
  return { teams, orgWide };
};

it("reads an array of teams, or a single string as one team, from the configured claim", async () => {
  expect(await accessOf({ groups: ["team-a", "team-b", "team-a"] })).toEqual({
    teams: ["team-a", "team-b"],
    orgWide: false,
  });
  expect(await accessOf({ groups: "team-a" })).toEqual({ teams: ["team-a"], orgWide: false });
  expect(await accessOf({ teams: ["team-a"] })).toEqual({ teams: [], orgWide: false }); // not the configured claim
});

it("makes a token org-wide by scope admin or by a team of AUTH_ORG_WIDE_TEAMS", async () => {
  expect(await accessOf({ groups: ["team-a", "appsec"] })).toEqual({ teams: ["team-a", "appsec"], orgWide: true });
  expect(await accessOf({ scope: "admin" })).toEqual({ teams: [], orgWide: true });
});

it("leaves every token org-wide, with no teams, when team access is off", async () => {
  expect(await accessOf({ groups: ["team-a"] }, off)).toEqual({ teams: null, orgWide: true });
  expect(await accessOf({ groups: 42 }, off)).toEqual({ teams: null, orgWide: true });
});

it.each([[42], [{ team: "a" }], [["team-a", 7]], [null], [true]])(
  "refuses a teams claim of %j as an invalid token",
  async (groups) => {
    const failure = await verify(`Bearer ${await token({ groups })}`).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(InvalidTokenError);
    expect(failure).toMatchObject({
      reason: "invalid_token",
      message: "The groups claim is not a string or an array of strings",
    });
  },
);
