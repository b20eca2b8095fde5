import { z } from "zod";
import { httpUrlField, nameField } from "../validation.ts";

export const CRITICALITIES = ["low", "medium", "high", "critical"] as const;

const tagsField = z
  .array(z.string().min(1, "Must not be empty").max(100, "Must be at most 100 characters"))
  .transform((tags) => [...new Set(tags)])
  .refine((tags) => tags.length <= 50, "At most 50 distinct tags")
  // The service counts distinct tags (duplicates are dropped first); the document's bound is what a
  // client that sends each tag once needs to know.
  .meta({
    maxItems: 50,
    description: "Up to 50 distinct tags of 1–100 characters; duplicates are removed (first occurrence kept).",
  });

const fields = {
  name: nameField,
  description: z.string().max(10_000, "Must be at most 10000 characters").nullable(),
  // null resets a defaulted field to its default.
  criticality: z.enum(CRITICALITIES).nullable(),
  owner: z.string().max(200, "Must be at most 200 characters").nullable(),
  repoUrl: httpUrlField.nullable(),
  serviceUrl: httpUrlField.nullable(),
  language: z.string().max(200, "Must be at most 200 characters").nullable(),
  tags: tagsField.nullable(),
};

export const createApplicationSchema = z.strictObject({
  ...fields,
  description: fields.description.optional(),
  criticality: fields.criticality.optional(),
  owner: fields.owner.optional(),
  repoUrl: fields.repoUrl.optional(),
  serviceUrl: fields.serviceUrl.optional(),
  language: fields.language.optional(),
  tags: fields.tags.optional(),
});
export type CreateApplicationInput = z.infer<typeof createApplicationSchema>;

export const updateApplicationSchema = createApplicationSchema.partial();
export type UpdateApplicationInput = z.infer<typeof updateApplicationSchema>;

export interface ApplicationFilter {
  /** Repeated in a query string, each value must match (so different values match nothing). */
  owner?: string | string[];
  criticality?: string | string[];
  /** Applications carrying every one of these tags. */
  tags?: string[];
}
