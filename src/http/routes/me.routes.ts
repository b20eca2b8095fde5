import { z } from "zod";
import { getMe } from "../../domain/me/me.service.ts";
import type { RouteDefinition } from "../route.ts";

const meSchema = z
  .object({
    sub: z.string(),
    scopes: z.array(z.string()).meta({ description: "As the token grants them (`admin` not expanded)" }),
    teams: z
      .array(z.string())
      .nullable()
      .meta({ description: "The token's teams (`[]` when it has none); null when team access is off" }),
    orgWide: z.boolean().meta({ description: "Whether the token sees every application" }),
  })
  .meta({ id: "Me" });

export const meRoutes: RouteDefinition[] = [
  {
    operationId: "GetMe",
    method: "GET",
    path: "/me",
    summary: "Who the token is: its subject, scopes and teams (extension)",
    description: "Any valid token; no scope needed (docs/spec/CONTRACT.md §17).",
    tag: "Access",
    success: { status: 200, description: "The caller as the service sees its token", schema: meSchema },
    errors: [],
    async handle(ctx, svc) {
      ctx.body = getMe(svc);
    },
  },
];
