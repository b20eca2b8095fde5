import { z } from "zod";
import { createPolicySchema, updatePolicySchema } from "../../domain/policies/policies.schemas.ts";
import * as policies from "../../domain/policies/policies.service.ts";
import { policyViewSchema, toPolicyView } from "../../domain/policies/policy.view.ts";
import { readJsonBody } from "../json-body.ts";
import { pageQueryShape, pageRequestOf, sendPage } from "../list-response.ts";
import type { RouteDefinition } from "../route.ts";
import { READ_ONLY_FIELDS } from "../../domain/validation.ts";

const tag = "Policies";

export const policyRoutes: RouteDefinition[] = [
  {
    operationId: "ListPolicies",
    method: "GET",
    path: "/policies",
    summary: "List policies, newest first",
    description: "Security policies, newest first, in pages of `limit` with a `Link` header to the next one.",
    tag,
    scope: "policies:read",
    query: z.object(pageQueryShape),
    success: { status: 200, description: "A page of policies", schema: z.array(policyViewSchema), headers: ["Link"] },
    errors: [400],
    async handle(ctx, svc) {
      const page = pageRequestOf(ctx);
      sendPage(ctx, await policies.listPolicies(svc, page), page.limit, toPolicyView);
    },
  },
  {
    operationId: "CreatePolicy",
    method: "POST",
    path: "/policies",
    summary: "Create a policy",
    description:
      "conditions.applicationIds absent or null: every application; an array (possibly empty) names existing applications.",
    tag,
    scope: "policies:write",
    body: createPolicySchema,
    bodyReadOnly: READ_ONLY_FIELDS,
    success: { status: 201, description: "The created policy", schema: policyViewSchema, headers: ["Location"] },
    errors: [400, 409, 413, 415],
    async handle(ctx, svc) {
      const policy = await policies.createPolicy(svc, await readJsonBody(ctx));
      ctx.status = 201;
      ctx.set("Location", `/policies/${policy.id}`);
      ctx.body = toPolicyView(policy);
    },
  },
  {
    operationId: "GetPolicy",
    method: "GET",
    path: "/policies/{id}",
    summary: "Get a policy",
    description: "One policy by id, with its action and conditions.",
    tag,
    scope: "policies:read",
    success: { status: 200, description: "The policy", schema: policyViewSchema },
    errors: [404],
    async handle(ctx, svc) {
      ctx.body = toPolicyView(await policies.getPolicy(svc, ctx.params.id!));
    },
  },
  {
    operationId: "UpdatePolicy",
    method: "PUT",
    path: "/policies/{id}",
    summary: "Update a policy (supplied fields overwrite, omitted ones are kept; conditions are replaced whole)",
    description:
      "Merge semantics: supplied fields overwrite, omitted ones are kept; a supplied `conditions` object replaces the stored one whole. Renaming onto a taken name is 409.",
    tag,
    scope: "policies:write",
    body: updatePolicySchema,
    bodyReadOnly: READ_ONLY_FIELDS,
    success: { status: 200, description: "The updated policy", schema: policyViewSchema },
    errors: [400, 404, 409, 413, 415],
    async handle(ctx, svc) {
      ctx.body = toPolicyView(await policies.updatePolicy(svc, ctx.params.id!, await readJsonBody(ctx)));
    },
  },
  {
    operationId: "DeletePolicy",
    method: "DELETE",
    path: "/policies/{id}",
    summary: "Delete a policy",
    description: "Deletes the policy and writes its event in the same transaction. 204.",
    tag,
    scope: "policies:write",
    success: { status: 204, description: "Deleted" },
    errors: [404],
    async handle(ctx, svc) {
      await policies.deletePolicy(svc, ctx.params.id!);
      ctx.status = 204;
    },
  },
];
