// Query.me: who the token is, as GET /me (docs/spec/CONTRACT.md §17).
import { getMe, type Me } from "../../domain/me/me.service.ts";
import { builder } from "../builder.ts";

const MeRef = builder.objectRef<Me>("Me").implement({
  description: "The caller as the service sees its token.",
  fields: (t) => ({
    sub: t.exposeString("sub"),
    scopes: t.exposeStringList("scopes", { description: "As the token grants them (admin not expanded)" }),
    teams: t.exposeStringList("teams", {
      nullable: true,
      description: "The token's teams ([] when it has none); null when team access is off",
    }),
    orgWide: t.exposeBoolean("orgWide", { description: "Whether the token sees every application" }),
  }),
});

builder.queryFields((t) => ({
  me: t.field({
    type: MeRef,
    description: "Who the token is: its subject, scopes and teams. Any valid token; no scope needed.",
    resolve: (_root, _args, ctx) => getMe(ctx.service),
  }),
}));
