// Who sees an event and a webhook subscription (docs/spec/CONTRACT.md §17): the TypeScript twins of
// the SQL test visible_to (test/integration/team-events.test.ts checks that they agree), and the
// teams a caller may give a subscription.
import type { Actor } from "../../src/auth/scopes.ts";
import {
  applicationAudience,
  eventVisibility,
  eventVisibleTo,
  type EventAudience,
  type ViewerTeams,
} from "../../src/domain/access/viewer.ts";
import { teamsToStore, teamsView, webhookVisibleTo } from "../../src/domain/webhooks/webhook-teams.ts";
import { DomainError } from "../../src/errors.ts";

/** Every subset of `items`. */
const subsets = <T>(items: readonly T[]): T[][] =>
  items.reduce<T[][]>((all, item) => [...all, ...all.map((s) => [...s, item])], [[]]);

const TEAMS = ["a", "b", "c"];
const AUDIENCES: EventAudience[] = [
  { teams: null, teamsAll: false },
  { teams: null, teamsAll: true },
  ...subsets(TEAMS).flatMap((teams) => [
    { teams, teamsAll: false },
    { teams, teamsAll: true },
  ]),
];
const VIEWERS: ViewerTeams[] = [null, ...subsets(TEAMS)];

describe("eventVisibleTo", () => {
  it("shows an org-wide viewer everything, and a confined one what its teams are given", () => {
    expect(eventVisibleTo({ teams: null, teamsAll: false }, null)).toBe(true);
    expect(eventVisibleTo({ teams: ["a"], teamsAll: false }, null)).toBe(true);
    expect(eventVisibleTo({ teams: null, teamsAll: false }, ["a"])).toBe(false);
    expect(eventVisibleTo({ teams: ["a"], teamsAll: false }, ["a", "b"])).toBe(true);
    expect(eventVisibleTo({ teams: ["a"], teamsAll: false }, ["b"])).toBe(false);
    expect(eventVisibleTo({ teams: ["a"], teamsAll: false }, [])).toBe(false);
  });

  it("needs any of the teams, or every one of them with teamsAll (none: everyone's)", () => {
    expect(eventVisibleTo({ teams: ["a", "b"], teamsAll: false }, ["b"])).toBe(true);
    expect(eventVisibleTo({ teams: ["a", "b"], teamsAll: true }, ["b"])).toBe(false);
    expect(eventVisibleTo({ teams: ["a", "b"], teamsAll: true }, ["b", "a", "c"])).toBe(true);
    expect(eventVisibleTo({ teams: [], teamsAll: true }, [])).toBe(true);
    expect(eventVisibleTo({ teams: [], teamsAll: false }, ["a"])).toBe(false);
  });

  it("is what eventVisibility's precomputed test answers, for every audience and viewer over three teams", () => {
    for (const viewer of VIEWERS) {
      const visible = eventVisibility(viewer);
      for (const audience of AUDIENCES) {
        expect([viewer, audience, visible(audience)]).toEqual([viewer, audience, eventVisibleTo(audience, viewer)]);
      }
    }
  });
});

describe("applicationAudience", () => {
  it("is the owner's team, any of the owners' for several, and org-wide viewers' only without one", () => {
    expect(applicationAudience("a")).toEqual({ teams: ["a"], teamsAll: false });
    expect(applicationAudience("a", "b", "a")).toEqual({ teams: ["a", "b"], teamsAll: false });
    expect(applicationAudience("a", null)).toEqual({ teams: ["a"], teamsAll: false });
    expect(applicationAudience(null)).toEqual({ teams: null, teamsAll: false });
    expect(applicationAudience()).toEqual({ teams: null, teamsAll: false });
    expect(eventVisibleTo(applicationAudience("a", "b"), ["b"])).toBe(true);
    expect(eventVisibleTo(applicationAudience(null), ["a", "b", "c"])).toBe(false);
  });
});

describe("webhook subscriptions' teams", () => {
  const actor = (teams: string[] | null, orgWide = teams === null): Actor => ({
    sub: "someone",
    scopes: new Set(["webhooks:write"]),
    exp: 0,
    teams,
    orgWide,
  });
  const refusal = (run: () => unknown) => {
    try {
      run();
    } catch (err) {
      return err instanceof DomainError ? err.kind : err;
    }
    return "accepted";
  };

  it("are reached by a confined viewer only when all of them are its own, and never when empty", () => {
    expect(webhookVisibleTo([], null)).toBe(true);
    expect(webhookVisibleTo(["a", "b"], null)).toBe(true);
    expect(webhookVisibleTo([], ["a"])).toBe(false);
    expect(webhookVisibleTo(["a"], ["a", "b"])).toBe(true);
    expect(webhookVisibleTo(["a", "b"], ["a"])).toBe(false);
    expect(webhookVisibleTo(["a"], [])).toBe(false);
  });

  it("show as the sorted list, or null for every application", () => {
    expect(teamsView(["b", "a"])).toEqual(["a", "b"]);
    expect(teamsView([])).toBeNull();
  });

  it("default to a confined caller's teams, or to every application for an org-wide one", () => {
    expect(teamsToStore(actor(["b", "a"]), undefined)).toEqual(["a", "b"]);
    expect(teamsToStore(actor(["a"], true), undefined)).toEqual([]);
    expect(teamsToStore(actor(null), undefined)).toEqual([]);
    expect(refusal(() => teamsToStore(actor([]), undefined))).toBe("forbidden");
  });

  it("let a confined caller name some of its own teams and nothing else", () => {
    expect(teamsToStore(actor(["a", "b"]), ["b", "b"])).toEqual(["b"]);
    expect(refusal(() => teamsToStore(actor(["a", "b"]), ["a", "c"]))).toBe("forbidden");
    expect(refusal(() => teamsToStore(actor(["a"]), []))).toBe("forbidden");
    expect(refusal(() => teamsToStore(actor(["a"]), null))).toBe("forbidden");
  });

  it("let an org-wide caller name any teams, or every application", () => {
    expect(teamsToStore(actor(["appsec"], true), ["x", "a"])).toEqual(["a", "x"]);
    expect(teamsToStore(actor(["appsec"], true), null)).toEqual([]);
    expect(teamsToStore(actor(["appsec"], true), [])).toEqual([]);
  });

  it("are none while team access is off unless named: then those owners' applications'", () => {
    expect(teamsToStore(actor(null), null)).toEqual([]);
    expect(teamsToStore(actor(null), [])).toEqual([]);
    expect(teamsToStore(actor(null), ["b", "a", "b"])).toEqual(["a", "b"]);
  });
});
