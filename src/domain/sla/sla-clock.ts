// A vulnerability's deadline and its state under the SLA (docs/spec/CONTRACT.md §19), from its clock:
// the moment the clock started (first found, or found again after resolved) moved later by every
// pause that ended, kept by the database on every write (migration 20261202120000_sla). Nothing here
// is stored: a change of the SLA changes every answer at once.
import type { Vulnerability } from "../../generated/prisma/client.ts";
import type { SlaDocument, SlaState, SlaView } from "./sla.schemas.ts";

const DAY_MS = 86_400_000;

type Severity = Vulnerability["severity"];
type Criticality = keyof SlaDocument["byCriticality"];

/**
 * The SLA's days for a severity in milliseconds, whole ones (as the database counts them: the
 * deadline watcher's SQL floors the same product).
 */
export const slaMilliseconds = (days: number): number => Math.floor(days * DAY_MS);

/** The SLA's days for a severity in an application of a criticality: its override, else the severity's. */
export const slaDays = (sla: SlaDocument, severity: Severity, criticality: Criticality): number =>
  sla.byCriticality[criticality]?.[severity] ?? sla.days[severity];

export type SlaClock = Pick<Vulnerability, "status" | "severity" | "slaClockBase" | "resolvedAt">;

export function slaOf(v: SlaClock, criticality: Criticality, sla: SlaDocument, now: Date): SlaView {
  if (v.status === "accepted") return { dueAt: null, state: "paused" };
  const due = v.slaClockBase.getTime() + slaMilliseconds(slaDays(sla, v.severity, criticality));
  const dueAt = new Date(due).toISOString();
  let state: SlaState;
  if (v.status === "resolved") state = (v.resolvedAt?.getTime() ?? now.getTime()) < due ? "met" : "missed";
  else if (now.getTime() >= due) state = "breached";
  else if (now.getTime() >= due - slaMilliseconds(sla.dueSoonDays)) state = "due_soon";
  else state = "on_track";
  return { dueAt, state };
}
