// Writing triage decisions onto vulnerabilities (CONTRACT §13), whatever brought them (a VEX
// document, a kept statement meeting a new finding): status and analysis, a history row per
// vulnerability and vulnerability.updated, in the caller's transaction. Every statement takes
// its rows as array parameters, 1,000 at a time, so 10,000 decisions are a few dozen statements.
import type { Tx } from "../../db/client.ts";
import { recordEvents } from "../../events/outbox.ts";
import type { Vulnerability } from "../../generated/prisma/client.ts";
import { chunksOf } from "../chunks.ts";
import { nextTurn } from "../next-turn.ts";
import { sameDecision, STATUS_OF_STATE, type Analysis, type AnalysisSource, type Decision } from "./analysis.ts";
import { toVulnerabilityUpdatedData } from "./vulnerability.view.ts";

const CHUNK = 250;

/** What a decision needs of the vulnerability it is about. */
export type DecisionTarget = Pick<Vulnerability, "id" | "applicationId" | "status" | "analysis" | "severity" | "title" | "createdAt">;

export interface DecisionToWrite {
  target: DecisionTarget;
  decision: Decision;
  /** Who made it: the token's subject that sent the VEX. */
  by: string | null;
}

export interface DecisionOrigin {
  source: AnalysisSource;
  at: Date;
}

/** Whether the decision would change the vulnerability (its status or its analysis). */
export function changes({ target, decision }: DecisionToWrite): boolean {
  return target.status !== STATUS_OF_STATE[decision.state] || !sameDecision(target.analysis as Analysis | null, decision);
}

/** Writes the decisions that change something; returns those. */
export async function writeDecisions<D extends DecisionToWrite>(tx: Tx, decisions: readonly D[], origin: DecisionOrigin): Promise<D[]> {
  const written: D[] = [];
  // Chunk by chunk, awaiting each: 10,000 decisions never hold the event loop at once.
  for (const decided of chunksOf(decisions, CHUNK)) {
    const changed = decided.filter(changes);
    written.push(...changed);
    if (changed.length === 0) {
      await nextTurn();
      continue;
    }
    const chunk = changed.map(({ target, decision, by }) => {
      const analysis: Analysis = { ...decision, source: origin.source, by, at: origin.at.toISOString() };
      return { target, analysis, status: STATUS_OF_STATE[decision.state] };
    });
    const column = <T>(pick: (c: (typeof chunk)[number]) => T) => chunk.map(pick);
    // One statement: the rows, and their history from the same parameters.
    await tx.$executeRaw`
      WITH d AS (
        SELECT * FROM unnest(${column((c) => c.target.id)}::uuid[], ${column((c) => c.target.status)}::text[],
                             ${column((c) => c.status)}::text[], ${column((c) => JSON.stringify(c.analysis))}::jsonb[],
                             ${column((c) => c.analysis.by)}::text[])
          AS d(id, previous, status, analysis, by)
      ), updated AS (
        UPDATE vulnerabilities v
           SET status = d.status::"VulnerabilityStatus", analysis = d.analysis, updated_at = ${origin.at},
               resolved_at = CASE WHEN d.status <> 'resolved' THEN NULL WHEN v.status = 'resolved' THEN v.resolved_at ELSE ${origin.at} END
          FROM d
         WHERE v.id = d.id
        RETURNING v.id
      )
      INSERT INTO vulnerability_changes (vulnerability_id, at, from_status, to_status, source, by, justification, detail)
      SELECT d.id, ${origin.at}, d.previous::"VulnerabilityStatus", d.status::"VulnerabilityStatus", ${origin.source}::"ChangeSource",
             d.by, d.analysis->>'justification', d.analysis->>'detail'
        FROM d JOIN updated USING (id)`;
    await recordEvents(
      tx,
      chunk.map(({ target, analysis, status }) => ({
        type: "vulnerability.updated",
        data: toVulnerabilityUpdatedData({ ...target, status, analysis: analysis as never }),
        applicationId: target.applicationId,
        occurredAt: origin.at,
      })),
    );
  }
  return written;
}
