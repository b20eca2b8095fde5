// The remediation SLA's document (docs/spec/CONTRACT.md §19): days per severity, overrides per
// application criticality, and how long before its deadline a vulnerability is due soon. Days are
// positive numbers, fractions allowed (0.5 is 12 hours); what a PUT omits takes the defaults
// (DefectDojo's).
import { z } from "zod";
import { CRITICALITIES } from "../applications/applications.schemas.ts";
import { severityField } from "../validation.ts";

export const SLA_STATES = ["on_track", "due_soon", "breached", "paused", "met", "missed"] as const;
export type SlaState = (typeof SLA_STATES)[number];

/** The states `sla=` filters on: those of a vulnerability still to be fixed. */
export const SLA_FILTER_STATES = ["on_track", "due_soon", "breached"] as const;
export type SlaFilterState = (typeof SLA_FILTER_STATES)[number];

const days = z
  .number()
  .positive("Must be a positive number of days")
  .max(36_500, "Must be at most 36500 days (100 years)");

export const DEFAULT_SLA_DAYS = { critical: 7, high: 30, medium: 90, low: 120 } as const;
export const DEFAULT_DUE_SOON_DAYS = 3;

export const slaDocumentSchema = z
  .strictObject({
    days: z
      .strictObject({
        critical: days.default(DEFAULT_SLA_DAYS.critical),
        high: days.default(DEFAULT_SLA_DAYS.high),
        medium: days.default(DEFAULT_SLA_DAYS.medium),
        low: days.default(DEFAULT_SLA_DAYS.low),
      })
      .default(DEFAULT_SLA_DAYS)
      .describe("Days to remediate per severity"),
    byCriticality: z
      .partialRecord(z.enum(CRITICALITIES), z.partialRecord(severityField, days))
      .default({})
      .describe("Overrides per application criticality; may be partial"),
    dueSoonDays: days.default(DEFAULT_DUE_SOON_DAYS).describe("A vulnerability is due_soon this close to its deadline"),
  })
  .meta({ id: "Sla" });

export type SlaDocument = z.output<typeof slaDocumentSchema>;

export const DEFAULT_SLA: SlaDocument = slaDocumentSchema.parse({});

export const slaViewSchema = z
  .object({
    dueAt: z.iso.datetime().nullable().describe("When it must be fixed by; null while accepted (its clock is paused)"),
    state: z.enum(SLA_STATES),
  })
  .meta({ id: "VulnerabilitySla" });

export type SlaView = z.infer<typeof slaViewSchema>;
