// A vulnerability's SLA state in SQL, for the reads that filter and count by it (docs/spec/CONTRACT.md
// §19), computed as sla-clock.ts computes it for the views. The deadlines' lengths of the
// application (one per severity, and the due-soon window) are read once per statement and
// application, as one small object: an uncorrelated subquery there, which Postgres evaluates once
// (an InitPlan), so each row costs a lookup and a comparison, not a function call.
import { severityField } from "../validation.ts";
import type { SlaFilterState } from "./sla.schemas.ts";

const SEVERITIES = severityField.options;

const daysMs = (path: string) => `floor(86400000 * (${path})::double precision)::bigint`;

/** The application `applicationId`'s deadlines' lengths in milliseconds, by severity, and `soon`. */
const lengthsSql = (applicationId: string) =>
  `(SELECT jsonb_build_object(${SEVERITIES.map(
    (s) =>
      `'${s}', ${daysMs(`coalesce(s.document -> 'byCriticality' -> c.criticality::text ->> '${s}', s.document -> 'days' ->> '${s}')`)}`,
  ).join(", ")}, 'soon', ${daysMs("s.document ->> 'dueSoonDays'")})
      FROM sla_settings s JOIN applications c ON c.id = ${applicationId})`;

/**
 * Whether the vulnerability `t` of the application `applicationId` (SQL expressions) is in `state`:
 * open or in progress, and where it stands against its deadline.
 */
export function slaStateSql(state: SlaFilterState, applicationId: string): string {
  const lengths = lengthsSql(applicationId);
  const due = `t.sla_clock_base + (${lengths} ->> t.severity::text)::bigint * interval '1 millisecond'`;
  const soon = `(${due}) - (${lengths} ->> 'soon')::bigint * interval '1 millisecond'`;
  const active = `t.status IN ('open', 'in_progress')`;
  switch (state) {
    case "breached":
      return `(${active} AND now() >= ${due})`;
    case "due_soon":
      return `(${active} AND now() < ${due} AND now() >= ${soon})`;
    case "on_track":
      return `(${active} AND now() < ${soon})`;
  }
}
