import { z } from "zod";
import { checkWebhookUrl } from "../../net/ssrf-guard.ts";
import { EVENT_TYPES, isEventType } from "../../events/catalog.ts";
import { absoluteUrlPattern, nameField, READ_ONLY_FIELDS } from "../validation.ts";

/** What every response shows in place of the secret; sent back on update it keeps the stored one. */
export const SECRET_MASK = "********";

export const SETTABLE_STATUSES = ["active", "disabled"] as const;

const HTTPS_URL = absoluteUrlPattern("https", { credentials: false });
const HTTPS_URL_START = new RegExp(HTTPS_URL);

// https only, no credentials; literal loopback/private addresses refused unless the deployment allows them.
const urlField = (allowPrivateTargets: boolean) =>
  z
    .string()
    .min(1, "Must not be empty")
    .max(2048, "Must be at most 2048 characters")
    .superRefine((url, ctx) => {
      const problem = HTTPS_URL_START.test(url)
        ? checkWebhookUrl(url, { allowPrivateTargets })
        : "url must be an absolute https:// URL without credentials";
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .meta({ format: "uri", pattern: HTTPS_URL });

const eventsField = z
  // Checked by the refinement (its message names the problem); the enum is what the document shows.
  .array(
    z
      .string()
      .refine(isEventType, "Unknown event type")
      .meta({ enum: [...EVENT_TYPES] }),
  )
  .min(1, "Subscribe to at least one event type")
  .transform((events) => [...new Set(events)]);

// The teams whose applications' events it receives (webhook-teams.ts decides what a caller may name).
const teamsField = z
  .array(z.string().min(1, "Must not be empty").max(200, "Must be at most 200 characters"))
  .max(100, "Must name at most 100 teams")
  .nullable()
  .describe(
    "The teams whose applications' events it receives (docs/spec/CONTRACT.md §17); null: every application's (org-wide tokens only). " +
      "A confined token names some of its own teams (all of them when omitted on create).",
  );

// Any non-empty secret up to 1024 characters: receivers choose their own (Standard Webhooks
// `whsec_…` keys included); the service only uses its UTF-8 bytes as the HMAC key.
const secretField = z.string().min(1, "Must not be empty").max(1024, "Must be at most 1024 characters");

/** `status` is read-only on create (new subscriptions are active), like id and the timestamps. */
/** On create `status` is read-only too; on update it may be set to active or disabled. */
export const CREATE_READ_ONLY_FIELDS = [...READ_ONLY_FIELDS, "status"] as const;
export const UPDATE_READ_ONLY_FIELDS = READ_ONLY_FIELDS;

/** The input schemas under one setting of WEBHOOK_ALLOW_PRIVATE_TARGETS. */
function schemasFor(allowPrivateTargets: boolean) {
  const create = z.strictObject({
    name: nameField,
    url: urlField(allowPrivateTargets),
    events: eventsField,
    secret: secretField.refine((s) => s !== SECRET_MASK, "Send the secret itself, not its mask"),
    teams: teamsField.optional(),
  });
  const update = z.strictObject({
    name: nameField.optional(),
    url: urlField(allowPrivateTargets).optional(),
    events: eventsField.optional(),
    secret: secretField.optional().describe(`Omit it, or send back "${SECRET_MASK}", to keep the stored secret`),
    teams: teamsField.optional(),
    // `error` is assigned by the service when deliveries are given up; callers may only switch a
    // subscription on or off (sending back the status it already has is accepted too).
    status: z
      .enum([...SETTABLE_STATUSES, "error"])
      .meta({ enum: [...SETTABLE_STATUSES] })
      .optional(),
  });
  return { create, update };
}

const strict = schemasFor(false);
const lenient = schemasFor(true);

export const webhookSchemas = (settings: { allowPrivateWebhookTargets: boolean }) =>
  settings.allowPrivateWebhookTargets ? lenient : strict;

/** The production rules; also what /openapi.json documents. */
export const createWebhookSchema = strict.create;
export const updateWebhookSchema = strict.update;
export type CreateWebhookInput = z.infer<typeof createWebhookSchema>;
export type UpdateWebhookInput = z.infer<typeof updateWebhookSchema>;
