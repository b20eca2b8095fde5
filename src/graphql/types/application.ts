// Application: the type, its queries and its mutations. Every resolver calls the same service
// function as the REST route. Fields pointing at scans and vulnerabilities live in those types' files.
import * as applications from "../../domain/applications/applications.service.ts";
import { builder } from "../builder.ts";
import type { GraphQLContext } from "../context.ts";
import { countedConnection } from "../connection.ts";
import { pageRequestOf, toConnection } from "../connection-shape.ts";
import { restShaped } from "../inputs.ts";
import { CriticalityEnum } from "./enums.ts";

export const ApplicationRef = builder.prismaObject("Application", {
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    description: t.exposeString("description", { nullable: true }),
    criticality: t.expose("criticality", { type: CriticalityEnum }),
    owner: t.exposeString("owner", { nullable: true }),
    repoUrl: t.exposeString("repoUrl", { nullable: true }),
    serviceUrl: t.exposeString("serviceUrl", { nullable: true }),
    language: t.exposeString("language", { nullable: true }),
    tags: t.exposeStringList("tags"),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

const ApplicationConnection = countedConnection(ApplicationRef, "Application");

const ApplicationFilter = builder.inputType("ApplicationFilter", {
  description: "Filters combine with AND, as in GET /applications.",
  fields: (t) => ({
    owner: t.string({ required: false }),
    criticality: t.field({ type: CriticalityEnum, required: false }),
    tags: t.stringList({ required: false, description: "Applications carrying every one of these tags" }),
  }),
});

type InputFieldBuilder = Parameters<Parameters<typeof builder.inputType>[1]["fields"]>[0];
const applicationInputFields = (t: InputFieldBuilder, create: boolean) => ({
  name: t.string({ required: create }),
  description: t.string({ required: false }),
  criticality: t.field({ type: CriticalityEnum, required: false }),
  owner: t.string({ required: false }),
  repoUrl: t.string({ required: false }),
  serviceUrl: t.string({ required: false }),
  language: t.string({ required: false }),
  tags: t.stringList({ required: false }),
});

const CreateApplicationInput = builder.inputType("CreateApplicationInput", {
  fields: (t) => applicationInputFields(t, true),
});
const UpdateApplicationInput = builder.inputType("UpdateApplicationInput", {
  description: "Supplied fields overwrite, omitted ones are kept, null clears (as PUT /applications/{id}).",
  fields: (t) => applicationInputFields(t, false),
});

builder.queryFields((t) => ({
  applications: t.field({
    type: ApplicationConnection,
    args: { filter: t.arg({ type: ApplicationFilter, required: false }), first: t.arg.int(), after: t.arg.string() },
    resolve: async (_root, args, ctx) => {
      const page = pageRequestOf(args);
      const filter = {
        owner: args.filter?.owner ?? undefined,
        criticality: args.filter?.criticality ?? undefined,
        tags: args.filter?.tags ?? undefined,
      };
      const result = await applications.listApplications(ctx.service, filter, page);
      return toConnection(result, page.cursor, () => applications.countApplications(ctx.service, filter));
    },
  }),
  application: t.prismaField({
    type: "Application",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_query, _root, args, ctx) => applications.getApplication(ctx.service, String(args.id)),
  }),
}));

builder.mutationFields((t) => ({
  createApplication: t.prismaField({
    type: "Application",
    args: { input: t.arg({ type: CreateApplicationInput, required: true }) },
    resolve: (_query, _root, args, ctx) => applications.createApplication(ctx.service, restShaped(args.input)),
  }),
  updateApplication: t.prismaField({
    type: "Application",
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateApplicationInput, required: true }) },
    resolve: (_query, _root, args, ctx) =>
      applications.updateApplication(ctx.service, String(args.id), restShaped(args.input)),
  }),
  deleteApplication: t.id({
    description: "Deletes the application with its scans and vulnerabilities; returns its id.",
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      await applications.deleteApplication(ctx.service, String(args.id));
      return String(args.id);
    },
  }),
}));

/** The application of a child row, batched across siblings (one statement per request). */
export function loadApplication(ctx: GraphQLContext, id: string) {
  return ctx.batch.get(
    "applicationById",
    null,
    (ids: readonly string[]) => applications.getApplicationsByIds(ctx.service, ids),
    () => null,
  )(id);
}
