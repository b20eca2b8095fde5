// The Application as callers see it (REST bodies; documented in /openapi.json).
import { z } from "zod";
import type { Application } from "../../generated/prisma/client.ts";
import { CRITICALITIES } from "./applications.schemas.ts";

export const applicationViewSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    criticality: z.enum(CRITICALITIES),
    owner: z.string().nullable(),
    repoUrl: z.url().nullable(),
    serviceUrl: z.url().nullable(),
    language: z.string().nullable(),
    tags: z.array(z.string()),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: "Application" });

export type ApplicationView = z.infer<typeof applicationViewSchema>;

export const toApplicationView = (a: Application): ApplicationView => ({
  id: a.id,
  name: a.name,
  description: a.description,
  criticality: a.criticality,
  owner: a.owner,
  repoUrl: a.repoUrl,
  serviceUrl: a.serviceUrl,
  language: a.language,
  tags: a.tags,
  createdAt: a.createdAt.toISOString(),
  updatedAt: a.updatedAt.toISOString(),
});
