// Remediation metrics (docs/spec/CONTRACT.md §19), per severity, from the history of changes: over a
// period, each resolution in it, how long it took from the clock's start (first found, or the
// reopening after an earlier resolution) and whether it came before its deadline (the time spent
// accepted in that cycle not counting, the SLA in force applied); and now, the open ones by age on
// the clock and those breached. For the portfolio, a team (`owner`) or an application, within what
// the caller sees (§17).
import { z } from "zod";
import { requireScope } from "../../auth/scopes.ts";
import { invalid, notFound } from "../../errors.ts";
import { isId } from "../../ids.ts";
import { viewerTeams } from "../access/viewer.ts";
import type { ServiceContext } from "../context.ts";
import { instantField as instant, parseInput, severityField } from "../validation.ts";
import { slaStateSql } from "./sla-sql.ts";

const DAY_MS = 86_400_000;
const DEFAULT_DAYS = 90;
const SEVERITIES = severityField.options;
type Severity = (typeof SEVERITIES)[number];

/** The age bins of open vulnerabilities, in whole days on the clock. */
export const AGE_BINS = [
  { fromDays: 0, toDays: 7 },
  { fromDays: 8, toDays: 30 },
  { fromDays: 31, toDays: 90 },
  { fromDays: 91, toDays: 180 },
  { fromDays: 181, toDays: null },
] as const;

export const remediationQuerySchema = z.strictObject({
  from: instant.optional().describe(`Start of the period; default ${DEFAULT_DAYS} days before \`to\``),
  to: instant.optional().describe("End of the period; default now"),
  applicationId: z.string().optional().describe("One application's metrics"),
  owner: z.string().min(1).optional().describe("One team's metrics: its applications (by owner)"),
});

export interface SeverityMetrics {
  resolved: number;
  mttrDays: { median: number | null; p90: number | null };
  withinSla: number | null;
  openByAge: { fromDays: number; toDays: number | null; count: number }[];
  breached: number;
}

export interface RemediationMetrics {
  from: Date;
  to: Date;
  applicationId: string | null;
  owner: string | null;
  bySeverity: Record<Severity, SeverityMetrics>;
}

const scopeSql = `
  SELECT v.id, v.severity, v.status, v.sla_clock_base, v.application_id, a.criticality
    FROM vulnerabilities v JOIN applications a ON a.id = v.application_id
   WHERE ($1::uuid IS NULL OR v.application_id = $1::uuid)
     AND ($2::text IS NULL OR a.owner = $2::text)
     AND ($3::text[] IS NULL OR a.owner = ANY($3::text[]))`;

/**
 * Each resolution in the period: the days from its cycle's start, and whether it came before the
 * deadline (the cycle's start, plus its time accepted before the resolution, plus the SLA's days).
 */
const RESOLUTIONS = `
  WITH scope AS MATERIALIZED (${scopeSql}),
  changes AS (
    SELECT c.vulnerability_id, c.id, c.at, c.from_status, c.to_status,
           lead(c.at) OVER (PARTITION BY c.vulnerability_id ORDER BY c.id) AS next_at,
           count(*) FILTER (WHERE c.from_status = 'resolved') OVER (PARTITION BY c.vulnerability_id ORDER BY c.id) AS cycle
      FROM vulnerability_changes c JOIN scope s ON s.id = c.vulnerability_id
  ),
  cycles AS (
    SELECT *,
           min(at) OVER (PARTITION BY vulnerability_id, cycle) AS cycle_start,
           coalesce(sum(CASE WHEN to_status = 'accepted' THEN next_at - at END)
             OVER (PARTITION BY vulnerability_id, cycle ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
             interval '0') AS paused
      FROM changes
  )
  SELECT s.severity::text AS severity,
         extract(epoch FROM (r.at - r.cycle_start)) * 1000 AS ms,
         r.at < r.cycle_start + r.paused + floor(86400000 * coalesce(
           (st.document -> 'byCriticality' -> s.criticality::text ->> s.severity::text)::double precision,
           (st.document -> 'days' ->> s.severity::text)::double precision)) * interval '1 millisecond' AS within
    FROM cycles r JOIN scope s ON s.id = r.vulnerability_id CROSS JOIN sla_settings st
   WHERE r.to_status = 'resolved' AND r.at >= $4::timestamptz AND r.at < $5::timestamptz`;

/** Now: the open and in-progress ones by whole days on the clock, and whether each is breached. */
const OPEN = `
  WITH t AS MATERIALIZED (${scopeSql})
  SELECT t.severity::text AS severity,
         floor(extract(epoch FROM (now() - t.sla_clock_base)) / 86400)::int AS days,
         ${slaStateSql("breached", "t.application_id")} AS breached
    FROM t WHERE t.status IN ('open', 'in_progress')`;

/** The value below which a share `q` of the sorted values lie, interpolated (as percentile_cont). */
function percentile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  const at = (sorted.length - 1) * q;
  const below = Math.floor(at);
  const above = Math.min(below + 1, sorted.length - 1);
  return sorted[below]! + (sorted[above]! - sorted[below]!) * (at - below);
}

export async function remediationMetrics(
  ctx: ServiceContext,
  raw: Record<string, unknown>,
): Promise<RemediationMetrics> {
  const actor = requireScope(ctx.actor, "vulnerabilities:read");
  const query = parseInput(
    remediationQuerySchema,
    Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined && v !== null)),
    "Query",
  );
  const to = query.to ?? new Date();
  const from = query.from ?? new Date(to.getTime() - DEFAULT_DAYS * DAY_MS);
  if (from.getTime() >= to.getTime())
    throw invalid("Query is invalid", [{ path: "from", message: "Must be before `to`" }]);
  if (query.applicationId !== undefined && !isId(query.applicationId)) throw notFound("Application");
  const teams = viewerTeams(actor);
  const values = [query.applicationId ?? null, query.owner ?? null, teams === null ? null : [...teams]];
  if (query.applicationId !== undefined) {
    const { rowCount } = await ctx.pool.query(
      "SELECT 1 FROM applications a WHERE a.id = $1::uuid AND ($2::text[] IS NULL OR a.owner = ANY($2::text[]))",
      [query.applicationId, values[2]],
    );
    if (!rowCount) throw notFound("Application");
  }
  const [resolutions, open] = await Promise.all([
    ctx.pool.query<{ severity: Severity; ms: string; within: boolean }>(RESOLUTIONS, [...values, from, to]),
    ctx.pool.query<{ severity: Severity; days: number; breached: boolean }>(OPEN, values),
  ]);
  const bySeverity = Object.fromEntries(
    SEVERITIES.map((severity) => {
      const mine = resolutions.rows.filter((r) => r.severity === severity);
      const days = mine.map((r) => Number(r.ms) / DAY_MS).sort((a, b) => a - b);
      const live = open.rows.filter((r) => r.severity === severity);
      const metrics: SeverityMetrics = {
        resolved: mine.length,
        mttrDays: { median: percentile(days, 0.5), p90: percentile(days, 0.9) },
        withinSla: mine.length === 0 ? null : mine.filter((r) => r.within).length / mine.length,
        openByAge: AGE_BINS.map((bin) => ({
          ...bin,
          count: live.filter((r) => r.days >= bin.fromDays && (bin.toDays === null || r.days <= bin.toDays)).length,
        })),
        breached: live.filter((r) => r.breached).length,
      };
      return [severity, metrics];
    }),
  ) as Record<Severity, SeverityMetrics>;
  return { from, to, applicationId: query.applicationId ?? null, owner: query.owner ?? null, bySeverity };
}

const severityMetricsViewSchema = z
  .object({
    resolved: z.number().int().describe("Resolutions in the period (each one counts)"),
    mttrDays: z.object({
      median: z.number().nullable().describe("Days from first found (or the reopening) to resolved; null when none"),
      p90: z.number().nullable(),
    }),
    withinSla: z.number().min(0).max(1).nullable().describe("The share resolved before their deadline; null when none"),
    openByAge: z.array(
      z.object({ fromDays: z.number().int(), toDays: z.number().int().nullable(), count: z.number().int() }),
    ),
    breached: z.number().int().describe("Open or in progress past their deadline, now"),
  })
  .meta({ id: "SeverityRemediationMetrics" });

export const remediationMetricsViewSchema = z
  .object({
    from: z.iso.datetime(),
    to: z.iso.datetime(),
    applicationId: z.string().nullable(),
    owner: z.string().nullable(),
    bySeverity: z.object(Object.fromEntries(SEVERITIES.map((s) => [s, severityMetricsViewSchema]))) as z.ZodObject<
      Record<Severity, typeof severityMetricsViewSchema>
    >,
  })
  .meta({ id: "RemediationMetrics" });

export const toRemediationMetricsView = (m: RemediationMetrics): z.infer<typeof remediationMetricsViewSchema> => ({
  ...m,
  from: m.from.toISOString(),
  to: m.to.toISOString(),
});
