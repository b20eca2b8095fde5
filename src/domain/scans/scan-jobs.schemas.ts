// Inputs of the scan-job lease API (docs/spec/CONTRACT.md §12), shared by its REST routes and /openapi.json.
import { z } from "zod";
import { nameField } from "../validation.ts";
import { SCAN_TYPES } from "./scans.schemas.ts";

export const MIN_LEASE_SECONDS = 30;
export const MAX_LEASE_SECONDS = 3600;
export const MAX_WAIT_SECONDS = 30;

const leaseIdField = z
  .uuid("Must be the leaseId the claim answered")
  .describe("The claim's leaseId: the lease must be that very claim");

export const claimScanJobSchema = z.strictObject({
  scanTypes: z
    .array(z.enum(SCAN_TYPES))
    .min(1, "Name at least one scan type")
    .max(SCAN_TYPES.length * 4, "Too many scan types")
    .describe("Scan types this agent can run"),
  agent: nameField.describe("The agent's name, for logs and failure reasons"),
  leaseSeconds: z
    .int()
    .min(MIN_LEASE_SECONDS, `Must be at least ${MIN_LEASE_SECONDS}`)
    .max(MAX_LEASE_SECONDS, `Must be at most ${MAX_LEASE_SECONDS}`)
    .default(300)
    .describe("How long the claim lasts without a heartbeat"),
});

export const claimScanJobQuerySchema = z.strictObject({
  waitSeconds: z.coerce
    .number("Must be a whole number of seconds")
    .int("Must be a whole number of seconds")
    .min(0, "Must be at least 0")
    .max(MAX_WAIT_SECONDS, `Must be at most ${MAX_WAIT_SECONDS}`)
    .default(0),
});

/** Heartbeat and release: no body needed; an agent names its claim to be fenced off from a later one. */
export const leaseBodySchema = z.strictObject({ leaseId: leaseIdField.optional() });

export const failScanJobSchema = z.strictObject({
  reason: z
    .string()
    .min(1, { message: "Must not be empty", abort: true })
    .max(10_000, "Must be at most 10000 characters")
    .refine((s) => s.trim().length > 0, "Must not be blank")
    .describe("Why it failed (e.g. the tool's last lines of stderr); becomes the scan's failure.reason"),
  leaseId: leaseIdField.optional(),
});

/** The report route's `leaseId` query parameter, for an agent completing the scan it holds. */
export const reportLeaseQuerySchema = z.strictObject({ leaseId: leaseIdField.optional() });
