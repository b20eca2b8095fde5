// Triage decisions as the rows that write them (decisions.ts): only those that change their
// vulnerability, each with its vulnerability.updated, as JSON text a chunk at a time. Pure, so that
// a worker thread can build a VEX apply's 10,000 (vex-plan.ts) off the service's event loop.
import { eventRows } from "../../events/event-rows.ts";
import type { Vulnerability } from "../../generated/prisma/client.ts";
import { chunksOf } from "../chunks.ts";
import { sameDecision, STATUS_OF_STATE, type Analysis, type AnalysisSource, type Decision } from "./analysis.ts";
import { toVulnerabilityUpdatedData } from "./vulnerability.view.ts";

/** Rows per statement: a few MiB of JSON, so that 10,000 decisions are four statements (and 100,000 forty). */
const CHUNK = 2_500;

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

/** One statement's worth, as JSON text: each vulnerability's new status and analysis, and their events (event-rows.ts). */
export interface DecisionChunk {
  decisions: string;
  events: string;
}

/** Whether the decision would change the vulnerability (its status or its analysis). */
export function changes({ target, decision }: DecisionToWrite): boolean {
  return target.status !== STATUS_OF_STATE[decision.state] || !sameDecision(target.analysis as Analysis | null, decision);
}

/**
 * The decisions that change something, and the chunks that write them, each made as it is asked
 * for (so that the next can be made while the previous is written).
 */
export function decisionChunks<D extends DecisionToWrite>(decisions: readonly D[], origin: DecisionOrigin): { changed: D[]; chunks: Iterable<DecisionChunk> } {
  const changed = decisions.filter(changes);
  return { changed, chunks: chunksMade(changed, origin) };
}

function* chunksMade(changed: readonly DecisionToWrite[], origin: DecisionOrigin): Generator<DecisionChunk> {
  const at = origin.at.toISOString();
  for (const chunk of chunksOf(changed, CHUNK)) {
    const rows = chunk.map(({ target, decision, by }) => {
      const analysis: Analysis = { ...decision, source: origin.source, by, at };
      return { target, analysis, status: STATUS_OF_STATE[decision.state] };
    });
    yield {
      decisions: JSON.stringify(rows.map(({ target, analysis, status }) => ({ id: target.id, previous: target.status, status, analysis }))),
      events: JSON.stringify(
        eventRows(
          rows.map(({ target, analysis, status }) => ({
            type: "vulnerability.updated" as const,
            data: toVulnerabilityUpdatedData({ ...target, status, analysis: analysis as never }),
            applicationId: target.applicationId,
            occurredAt: origin.at,
          })),
        ),
      ),
    };
  }
}
