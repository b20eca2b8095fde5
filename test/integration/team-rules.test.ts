// The rules of teams for writes (docs/spec/CONTRACT.md §17): who may give an application which owner,
// the policies a confined token may write, and which scans a confined agent claims.
import { gql, codesOf } from "../helpers/graphql.ts";
import { teamToken } from "../helpers/team-tokens.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ AUTH_TEAMS_CLAIM: "teams", AUTH_ORG_WIDE_TEAMS: "appsec", SCAN_ENGINES: "sast:external" });
});
afterAll(() => t.close());

const create = (token: string, body: Record<string, unknown>) => t.request("POST", "/applications", { token, body });

describe("creating an application", () => {
  it("gives it the caller's one team when the owner is omitted", async () => {
    const res = await create(await teamToken(["team-a"]), { name: "implicit-owner" });
    expect(res.status).toBe(201);
    expect(res.body.owner).toBe("team-a");
  });

  it("wants the owner named by a token of several teams (400 naming owner), and refuses a token of none (403)", async () => {
    const several = await create(await teamToken(["team-a", "team-b"]), { name: "which-team" });
    expect(several.status).toBe(400);
    expect(several.body.errors).toEqual([{ path: "owner", message: "Must be one of team-a, team-b" }]);
    const named = await create(await teamToken(["team-a", "team-b"]), { name: "which-team", owner: "team-b" });
    expect(named.body.owner).toBe("team-b");
    const none = await create(await teamToken([]), { name: "nobody" });
    expect(none.status).toBe(403);
    expect(none.headers.get("www-authenticate")).toBeNull();
  });

  it("refuses an owner outside the caller's teams with 403, before it says the name is taken", async () => {
    await create(await teamToken(["team-a"]), { name: "taken" });
    const other = await create(await teamToken(["team-b"]), { name: "taken", owner: "team-a" });
    expect(other.status).toBe(403);
    expect(other.body.code).toBe("forbidden");
    expect((await create(await teamToken(["team-b"]), { name: "taken" })).status).toBe(409);
    expect((await create(await teamToken(["team-b"]), { name: "unowned", owner: null })).status).toBe(403);
  });

  it("lets an org-wide token set any owner, or none", async () => {
    const appsec = await teamToken(["appsec"]);
    expect((await create(appsec, { name: "for-team-z", owner: "team-z" })).body.owner).toBe("team-z");
    expect((await create(appsec, { name: "orphan" })).body.owner).toBeNull();
  });

  it("answers GraphQL's createApplication the same way (FORBIDDEN)", async () => {
    const res = await gql(
      t,
      `mutation { createApplication(input: { name: "gql-outside", owner: "team-a" }) { id } }`,
      {},
      { token: await teamToken(["team-b"]) },
    );
    expect(codesOf(res)).toEqual(["FORBIDDEN"]);
  });
});

describe("changing an application's owner", () => {
  it("allows only one of the caller's teams to a confined token (403 otherwise), and any owner to an org-wide one", async () => {
    const ab = await teamToken(["team-a", "team-b"]);
    const id = (await create(ab, { name: "moving", owner: "team-a" })).body.id;
    expect((await t.request("PUT", `/applications/${id}`, { token: ab, body: { owner: "team-b" } })).body.owner).toBe(
      "team-b",
    );
    const outside = await t.request("PUT", `/applications/${id}`, { token: ab, body: { owner: "team-c" } });
    expect(outside.status).toBe(403);
    expect((await t.request("PUT", `/applications/${id}`, { token: ab, body: { owner: null } })).status).toBe(403);
    const appsec = await teamToken(["appsec"]);
    const moved = await t.request("PUT", `/applications/${id}`, { token: appsec, body: { owner: "team-c" } });
    expect(moved.body.owner).toBe("team-c");
    // Now team-c's: for team-a and team-b it does not exist.
    expect((await t.request("GET", `/applications/${id}`, { token: ab })).status).toBe(404);
  });
});

describe("policies of a confined token", () => {
  it("must name its own applications: none, every one, or another team's is refused", async () => {
    const a = await teamToken(["team-a"]);
    const mine = (await create(a, { name: "policy-target-a" })).body.id;
    const theirs = (await create(await teamToken(["team-b"]), { name: "policy-target-b" })).body.id;
    const policy = (conditions?: unknown) =>
      t.request("POST", "/policies", { token: a, body: { name: `p-${Math.random()}`, action: "block", conditions } });
    expect((await policy({ applicationIds: [mine] })).status).toBe(201);
    expect((await policy()).status).toBe(403);
    expect((await policy({ applicationIds: [] })).status).toBe(403);
    const other = await policy({ applicationIds: [mine, theirs] });
    expect(other.status).toBe(400);
    expect(other.body.errors).toEqual([
      { path: "conditions.applicationIds[1]", message: `No application with id '${theirs}'` },
    ]);
  });

  it("reads the organisation's policies but may not change them (403)", async () => {
    const org = await t.request("POST", "/policies", { body: { name: "org-wide-gate", action: "monitor" } });
    const a = await teamToken(["team-a"]);
    expect((await t.request("GET", `/policies/${org.body.id}`, { token: a })).status).toBe(200);
    expect((await t.request("PUT", `/policies/${org.body.id}`, { token: a, body: { action: "block" } })).status).toBe(
      403,
    );
    expect((await t.request("DELETE", `/policies/${org.body.id}`, { token: a })).status).toBe(403);
  });
});

describe("scan agents", () => {
  it("a confined agent claims only its teams' scans, oldest first; the organisation's agent any", async () => {
    const trigger = async (team: string) => {
      const token = await teamToken([team]);
      const app = (await create(token, { name: `agent-target-${team}` })).body.id;
      return (await t.request("POST", `/applications/${app}/scans`, { token, body: { scanType: "sast" } })).body.id;
    };
    const ofA = await trigger("team-a");
    const ofB = await trigger("team-b");
    const claim = async (teams: string[]) =>
      t.request("POST", "/scan-jobs/claim", {
        token: await teamToken(teams, ["scans:run"], `agent-of-${teams.join("+")}`),
        body: { scanTypes: ["sast"], agent: "runner" },
      });
    const b = await claim(["team-b"]);
    expect(b.body.scan.id).toBe(ofB);
    expect((await claim(["team-b"])).status).toBe(204);
    expect((await claim(["team-c"])).status).toBe(204);
    expect((await claim(["appsec"])).body.scan.id).toBe(ofA);
    // Team B's agent cannot learn of A's scan by its id either.
    const heartbeat = await t.request("POST", `/scan-jobs/${ofA}/heartbeat`, {
      token: await teamToken(["team-b"], ["scans:run"], "agent-of-team-b"),
    });
    expect(heartbeat.status).toBe(404);
  });
});
