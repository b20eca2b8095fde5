// A vulnerability's remediation deadline (docs/spec/CONTRACT.md §19): Vulnerability.sla, computed for
// every vulnerability of a request in one read of the SLA and their applications' criticalities.
import { slaEvaluator } from "../../domain/sla/sla.service.ts";
import { SLA_FILTER_STATES, SLA_STATES, type SlaView } from "../../domain/sla/sla.schemas.ts";
import type { Vulnerability } from "../../generated/prisma/client.ts";
import { builder } from "../builder.ts";
import { upperCaseEnum } from "./enums.ts";

export const SlaStateEnum = upperCaseEnum(
  "SlaState",
  SLA_STATES,
  "ON_TRACK, DUE_SOON and BREACHED while open or in progress; PAUSED while accepted; MET or MISSED once resolved.",
);

export const SlaFilterStateEnum = upperCaseEnum(
  "SlaFilterState",
  SLA_FILTER_STATES,
  "Where an open or in-progress vulnerability stands against its remediation deadline.",
);

/** The fields Vulnerability.sla is computed from: what a read of only the selected columns must add. */
export const SLA_FIELDS = ["status", "severity", "slaClockBase", "resolvedAt"] as const;

const VulnerabilitySlaRef = builder.objectRef<SlaView>("VulnerabilitySla").implement({
  fields: (t) => ({
    dueAt: t.field({
      type: "DateTime",
      nullable: true,
      description: "When it must be fixed by; null while accepted (its clock is paused).",
      resolve: (s) => (s.dueAt === null ? null : new Date(s.dueAt)),
    }),
    state: t.field({ type: SlaStateEnum, resolve: (s) => s.state }),
  }),
});

builder.prismaObjectFields("Vulnerability", (t) => ({
  sla: t.field({
    type: VulnerabilitySlaRef,
    description: "Its remediation deadline and where it stands.",
    resolve: (v, _args, ctx) =>
      ctx.batch.get(
        "vulnerabilitySla",
        null,
        async (rows: readonly Vulnerability[]) => {
          const slaOf = await slaEvaluator(
            ctx.service.pool,
            rows.map((r) => r.applicationId),
          );
          return new Map(rows.map((r) => [r, slaOf(r)]));
        },
        () => ({ dueAt: null, state: "paused" }) as SlaView,
      )(v),
  }),
}));
