// Triage as documents (CONTRACT §13): a VEX document's statements applied to an application's
// vulnerabilities, and the decisions in force read back for an export. The document is read by
// src/vex/ (OpenVEX, CycloneDX); here are the rules, whichever door the document came through.
import { requireScope } from "../../auth/scopes.ts";
import { isForeignKeyViolation } from "../../db/client.ts";
import type { z } from "zod";
import { notFound } from "../../errors.ts";
import { Prisma, type Vulnerability } from "../../generated/prisma/client.ts";
import { requireApplication } from "../applications/require-application.ts";
import type { ServiceContext } from "../context.ts";
import { nextTurn } from "../next-turn.ts";
import { reviveRows } from "../per-application.ts";
import { writeDecisions, type DecisionTarget } from "./decisions.ts";
import { keepStatements } from "./kept-statements.ts";
import { matchStatements } from "./vex-matching.ts";
import type { vexOutcomeSchema } from "./vex-outcome.view.ts";
import type { VexReading, VexStatement } from "./vex-statement.ts";

/** CONTRACT §13's answer: how many statements did what, and those that could not apply (vex-outcome.view.ts). */
export type VexOutcome = z.infer<typeof vexOutcomeSchema>;

/** 10,000 statements against 10,000 vulnerabilities take a second or two; the default 5 s is too tight a margin. */
const VEX_TRANSACTION = { timeout: 60_000 };

type Candidate = DecisionTarget & Pick<Vulnerability, "aliases" | "location">;

/**
 * Applies a VEX document to the application's vulnerabilities. `read` reads the document once the
 * caller is known to be allowed to (the scope is checked before anything about the input).
 * Every change, its history row and its vulnerability.updated are one transaction, taken under
 * the application's lock, as a scan's results are: a VEX and a scan of one application never
 * interleave.
 */
export async function applyVex(ctx: ServiceContext, applicationId: string, read: () => VexReading | Promise<VexReading>): Promise<VexOutcome> {
  const actor = requireScope(ctx.actor, "vulnerabilities:triage");
  await requireApplication(ctx.db, applicationId);
  const reading = await read();
  const ids = [...new Set(reading.statements.flatMap((s) => s.ids))];
  try {
    return await ctx.db.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${applicationId}, 0))`;
      // Not `aliases && ids`: that compares every alias with every id (10,000 × 10,000 took seconds); a hash join does not.
      // One JSON value, not rows: decoding 10,000 rows one by one held the event loop for tens of milliseconds.
      const [{ rows }] = await tx.$queryRaw<[{ rows: unknown }]>`
        SELECT json_agg(json_build_object('id', id, 'applicationId', application_id, 'status', status, 'analysis', analysis,
                                          'severity', severity, 'title', title, 'createdAt', created_at, 'aliases', aliases,
                                          'location', location)) AS rows
          FROM vulnerabilities
         WHERE application_id = ${applicationId}::uuid
           AND id IN (SELECT v.id FROM vulnerabilities v, unnest(v.aliases) AS alias
                       WHERE v.application_id = ${applicationId}::uuid AND alias IN (SELECT unnest(${ids}::text[])))`;
      const candidates = reviveRows<Candidate>(rows, ["createdAt"]);
      await nextTurn();
      const { decided, matched } = await matchStatements(reading.statements, candidates);
      const decisions = [...decided].map(([target, statement]) => ({ target, decision: statement.decision, by: actor.sub, statement }));
      const now = new Date();
      const written = await writeDecisions(tx, decisions, { source: "vex", at: now });
      const changing = new Set<VexStatement>(written.map((d) => d.statement));
      await keepStatements(tx, applicationId, reading.statements, actor.sub, now);
      return {
        applied: changing.size,
        unchanged: matched.size - changing.size,
        pending: reading.statements.length - matched.size,
        errors: reading.errors,
      };
    }, VEX_TRANSACTION);
  } catch (err) {
    // Deleted while the document was read.
    if (isForeignKeyViolation(err)) throw notFound("Application");
    throw err;
  }
}

/** A vulnerability with a decision in force, as an export needs it. */
export type DecidedVulnerability = Pick<Vulnerability, "id" | "aliases" | "location" | "packageName" | "packageVersion" | "status" | "analysis" | "title">;

/** The application and every one of its vulnerabilities with an analysis, oldest first. */
export async function decisionsInForce(ctx: ServiceContext, applicationId: string) {
  requireScope(ctx.actor, "vulnerabilities:read");
  await requireApplication(ctx.db, applicationId);
  const application = await ctx.db.application.findUniqueOrThrow({ where: { id: applicationId }, select: { id: true, name: true } });
  const vulnerabilities: DecidedVulnerability[] = await ctx.db.vulnerability.findMany({
    where: { applicationId, analysis: { not: Prisma.AnyNull } },
    select: { id: true, aliases: true, location: true, packageName: true, packageVersion: true, status: true, analysis: true, title: true },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  return { application, vulnerabilities };
}
