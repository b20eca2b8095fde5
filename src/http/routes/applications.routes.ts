import { z } from "zod";
import { applicationViewSchema, toApplicationView } from "../../domain/applications/application.view.ts";
import { createApplicationSchema, updateApplicationSchema } from "../../domain/applications/applications.schemas.ts";
import * as applications from "../../domain/applications/applications.service.ts";
import { readJsonBody } from "../json-body.ts";
import { pageQueryShape, pageRequestOf, sendPage } from "../list-response.ts";
import type { RouteDefinition } from "../route.ts";
import { READ_ONLY_FIELDS } from "../../domain/validation.ts";

const tag = "Applications";

export const applicationRoutes: RouteDefinition[] = [
  {
    operationId: "ListApplications",
    method: "GET",
    path: "/applications",
    summary: "List applications, newest first",
    description:
      "Applications the token's teams own (all of them for an org-wide token), newest first, filtered by owner, criticality and tags, in pages of `limit` with a `Link` header to the next one.",
    tag,
    scope: "applications:read",
    query: z.object({
      owner: z.string().optional().describe("Owner or owning team identifier (exact match)"),
      criticality: z.string().optional().describe("low, medium, high or critical; any other value matches nothing"),
      tag: z
        .array(z.string())
        .optional()
        .describe("Applications carrying every tag given (repeat the parameter for several)"),
      ...pageQueryShape,
    }),
    success: {
      status: 200,
      description: "A page of applications",
      schema: z.array(applicationViewSchema),
      headers: ["Link"],
    },
    errors: [400],
    async handle(ctx, svc) {
      const page = pageRequestOf(ctx);
      const tags = ctx.query.tag === undefined ? undefined : [ctx.query.tag].flat();
      const filter = { owner: ctx.query.owner, criticality: ctx.query.criticality, tags };
      sendPage(ctx, await applications.listApplications(svc, filter, page), page.limit, toApplicationView);
    },
  },
  {
    operationId: "CreateApplication",
    method: "POST",
    path: "/applications",
    summary: "Create an application",
    description:
      "Creates an application in the inventory; its name is unique. Answers 201 with the application and its `Location`, and writes an `application.created` event in the same transaction.",
    tag,
    scope: "applications:write",
    body: createApplicationSchema,
    bodyReadOnly: READ_ONLY_FIELDS,
    success: {
      status: 201,
      description: "The created application",
      schema: applicationViewSchema,
      headers: ["Location"],
    },
    errors: [400, 409, 413, 415],
    async handle(ctx, svc) {
      const app = await applications.createApplication(svc, await readJsonBody(ctx));
      ctx.status = 201;
      ctx.set("Location", `/applications/${app.id}`);
      ctx.body = toApplicationView(app);
    },
  },
  {
    operationId: "GetApplication",
    method: "GET",
    path: "/applications/{id}",
    summary: "Get an application",
    description: "One application by id; 404 when it does not exist or belongs to a team the token is not in.",
    tag,
    scope: "applications:read",
    success: { status: 200, description: "The application", schema: applicationViewSchema },
    errors: [404],
    async handle(ctx, svc) {
      ctx.body = toApplicationView(await applications.getApplication(svc, ctx.params.id!));
    },
  },
  {
    operationId: "UpdateApplication",
    method: "PUT",
    path: "/applications/{id}",
    summary: "Update an application (supplied fields overwrite, omitted ones are kept, null clears)",
    description:
      "Merge semantics: every supplied top-level field overwrites, an omitted field is kept, `null` clears an optional field. A GET result sent back is accepted (its id and times are ignored). Renaming onto a taken name is 409.",
    tag,
    scope: "applications:write",
    body: updateApplicationSchema,
    bodyReadOnly: READ_ONLY_FIELDS,
    success: { status: 200, description: "The updated application", schema: applicationViewSchema },
    errors: [400, 404, 409, 413, 415],
    async handle(ctx, svc) {
      ctx.body = toApplicationView(await applications.updateApplication(svc, ctx.params.id!, await readJsonBody(ctx)));
    },
  },
  {
    operationId: "DeleteApplication",
    method: "DELETE",
    path: "/applications/{id}",
    summary: "Delete an application with its scans and vulnerabilities",
    description:
      "Deletes the application with its scans, vulnerabilities and decisions, and writes an `application.deleted` event in the same transaction. 204.",
    tag,
    scope: "applications:write",
    success: { status: 204, description: "Deleted" },
    errors: [404],
    async handle(ctx, svc) {
      await applications.deleteApplication(svc, ctx.params.id!);
      ctx.status = 204;
    },
  },
];
