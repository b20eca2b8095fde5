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
import { daysBefore, instantField as instant, parseInput, severityField } from "../validation.ts";

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
  from: instant.optional().describe(`Start of the period, before \`to\`; default ${DEFAULT_DAYS} days before \`to\``),
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
  SELECT v.id, v.severity, v.status, v.sla_clock_base, a.criticality
    FROM vulnerabilities v JOIN applications a ON a.id = v.application_id
   WHERE ($1::uuid IS NULL OR v.application_id = $1::uuid)
     AND ($2::text IS NULL OR a.owner = $2::text)
     AND ($3::text[] IS NULL OR a.owner = ANY($3::text[]))`;

/** Each pair of severity and criticality with its deadline's length in milliseconds, by the SLA in force. */
const LENGTHS = `
  SELECT c.criticality, s.severity,
         floor(86400000 * coalesce(
           (st.document -> 'byCriticality' -> c.criticality::text ->> s.severity::text)::double precision,
           (st.document -> 'days' ->> s.severity::text)::double precision))::bigint AS ms
    FROM sla_settings st
   CROSS JOIN unnest(enum_range(NULL::"Criticality")) AS c(criticality)
   CROSS JOIN unnest(enum_range(NULL::"Severity")) AS s(severity)`;

/**
 * Per severity, the resolutions in the period: how many, the median and 90th percentile of the days
 * from their cycle's start (interpolated), and how many came before the deadline (the cycle's
 * start, plus its time accepted before the resolution, plus the SLA's days).
 */
const RESOLUTIONS = `
  WITH scope AS MATERIALIZED (${scopeSql}),
  lengths AS (${LENGTHS}),
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
  ),
  resolutions AS (
    SELECT s.severity,
           (extract(epoch FROM (r.at - r.cycle_start)) * 1000)::double precision / ${DAY_MS} AS days,
           r.at < r.cycle_start + r.paused + l.ms * interval '1 millisecond' AS within
      FROM cycles r JOIN scope s ON s.id = r.vulnerability_id
      JOIN lengths l ON l.severity = s.severity AND l.criticality = s.criticality
     WHERE r.to_status = 'resolved' AND r.at >= $4::timestamptz AND r.at < $5::timestamptz
  )
  SELECT severity::text AS severity, count(*)::int AS resolved,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY days) AS median,
         percentile_cont(0.9) WITHIN GROUP (ORDER BY days) AS p90,
         count(*) FILTER (WHERE within)::int AS within
    FROM resolutions GROUP BY severity`;

/** The bin of AGE_BINS a whole number of days `days` (SQL) falls in, by its index. */
const ageBinSql = (days: string) =>
  `CASE ${AGE_BINS.slice(0, -1)
    .map((bin, i) => `WHEN ${days} <= ${bin.toDays} THEN ${i}`)
    .join(" ")} ELSE ${AGE_BINS.length - 1} END`;

/** Now, per severity and age bin (whole days on the clock): the open and in-progress ones, and those breached. */
const OPEN = `
  WITH t AS (${scopeSql}),
  lengths AS (${LENGTHS})
  SELECT t.severity::text AS severity,
         ${ageBinSql("floor(extract(epoch FROM (now() - t.sla_clock_base)) / 86400)")} AS bin,
         count(*)::int AS count,
         count(*) FILTER (WHERE now() >= t.sla_clock_base + l.ms * interval '1 millisecond')::int AS breached
    FROM t JOIN lengths l ON l.severity = t.severity AND l.criticality = t.criticality
   WHERE t.status IN ('open', 'in_progress')
   GROUP BY 1, 2`;

/** Both in one statement: what the benchmark compares the service's answer with. */
export const AGGREGATES_SQL = `SELECT (SELECT json_agg(r) FROM (${RESOLUTIONS}) r) AS resolutions,
                                      (SELECT json_agg(o) FROM (${OPEN}) o) AS open`;

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
  const from = query.from ?? daysBefore(to, DEFAULT_DAYS);
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
    ctx.pool.query<{ severity: Severity; resolved: number; median: number | null; p90: number | null; within: number }>(
      RESOLUTIONS,
      [...values, from, to],
    ),
    ctx.pool.query<{ severity: Severity; bin: number; count: number; breached: number }>(OPEN, values),
  ]);
  const bySeverity = Object.fromEntries(
    SEVERITIES.map((severity) => {
      const done = resolutions.rows.find((r) => r.severity === severity);
      const live = open.rows.filter((r) => r.severity === severity);
      const metrics: SeverityMetrics = {
        resolved: done?.resolved ?? 0,
        mttrDays: { median: done?.median ?? null, p90: done?.p90 ?? null },
        withinSla: done ? done.within / done.resolved : null,
        openByAge: AGE_BINS.map((bin, i) => ({
          ...bin,
          count: live.find((r) => r.bin === i)?.count ?? 0,
        })),
        breached: live.reduce((sum, r) => sum + r.breached, 0),
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
