// The remediation SLA (docs/spec/CONTRACT.md §19): read by whoever reads vulnerabilities, replaced
// whole by an org-wide token that writes policies (it is the organisation's, as a policy for every
// application is, §17), and what the vulnerabilities' `sla` is computed with.
import type pg from "pg";
import { requireScope } from "../../auth/scopes.ts";
import type { Db, Tx } from "../../db/client.ts";
import { outsideTeams } from "../../errors.ts";
import { viewerTeams } from "../access/viewer.ts";
import type { ServiceContext } from "../context.ts";
import { parseInput, severityField } from "../validation.ts";
import { CRITICALITIES } from "../applications/applications.schemas.ts";
import { slaDays, slaMilliseconds, slaOf, type SlaClock } from "./sla-clock.ts";
import { slaDocumentSchema, type SlaDocument, type SlaView } from "./sla.schemas.ts";

const SEVERITIES = severityField.options;

/** The SLA in force (its document, parsed again so that a default added later fills it in). */
export async function readSla(db: Db | Tx): Promise<SlaDocument> {
  const row = await db.slaSettings.findUniqueOrThrow({ where: { id: true } });
  return slaDocumentSchema.parse(row.document);
}

export async function getSla(ctx: ServiceContext): Promise<SlaDocument> {
  requireScope(ctx.actor, "vulnerabilities:read");
  return readSla(ctx.db);
}

export async function replaceSla(ctx: ServiceContext, input: unknown): Promise<SlaDocument> {
  const actor = requireScope(ctx.actor, "policies:write");
  if (viewerTeams(actor) !== null) throw outsideTeams("Only an org-wide token may change the SLA");
  const document = parseInput(slaDocumentSchema, input, "SLA");
  await ctx.db.$transaction(async (tx) => {
    await tx.slaSettings.update({ where: { id: true }, data: { document, updatedAt: new Date() } });
    await tx.$executeRawUnsafe(REARM, JSON.stringify(pairMilliseconds(document)));
  });
  return document;
}

/** Each pair of severity and criticality, with its deadline's length in milliseconds. */
function pairMilliseconds(sla: SlaDocument) {
  return SEVERITIES.flatMap((severity) =>
    CRITICALITIES.map((criticality) => ({
      severity,
      criticality,
      ms: slaMilliseconds(slaDays(sla, severity, criticality)),
    })),
  );
}

/**
 * A deadline already told and now moved back into the future is to be told again when it passes:
 * it is no longer told (the others are read with the new days by the watcher as they are). Each
 * pair's told rows in the future are a range of the told rows' index.
 */
const REARM = `
  UPDATE sla_deadlines d SET told = false
    FROM json_to_recordset($1::json) AS p(severity "Severity", criticality "Criticality", ms bigint)
   WHERE d.told AND d.severity = p.severity AND d.criticality = p.criticality
     AND d.clock_base > now() - p.ms * interval '1 millisecond'`;

/** A vulnerability with what its SLA is computed from: its application's criticality. */
export type SlaSubject = SlaClock & { applicationId: string };

/**
 * What gives each vulnerability of the applications `applicationIds` its `sla`, as of now, read
 * through Prisma: inside the caller's transaction when it has one (the policy gate, which a scan's
 * completion evaluates in its transaction).
 */
export async function slaEvaluatorOf(
  db: Db | Tx,
  applicationIds: readonly string[],
): Promise<(v: SlaSubject) => SlaView> {
  const sla = await readSla(db);
  const applications = await db.application.findMany({
    where: { id: { in: [...applicationIds] } },
    select: { id: true, criticality: true },
  });
  const criticalities = new Map(applications.map((a) => [a.id, a.criticality]));
  const now = new Date();
  return (v) => slaOf(v, criticalities.get(v.applicationId) ?? "medium", sla, now);
}

/** The same through pg, the SLA and the applications' criticalities read in one statement (the REST reads). */
export async function slaEvaluator(
  pool: pg.Pool,
  applicationIds: readonly string[],
): Promise<(v: SlaSubject) => SlaView> {
  const { rows } = await pool.query<{ document: unknown; criticalities: Record<string, string> | null; now: Date }>({
    name: "sla-evaluator",
    text: `SELECT s.document, now() AS now,
                  (SELECT json_object_agg(a.id, a.criticality) FROM applications a WHERE a.id = ANY($1::uuid[])) AS criticalities
             FROM sla_settings s`,
    values: [[...new Set(applicationIds)]],
  });
  const sla = slaDocumentSchema.parse(rows[0]!.document);
  const criticalities = rows[0]!.criticalities ?? {};
  const now = rows[0]!.now;
  return (v) => slaOf(v, (criticalities[v.applicationId] ?? "medium") as keyof SlaDocument["byCriticality"], sla, now);
}
