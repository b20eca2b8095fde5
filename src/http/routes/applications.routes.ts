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
