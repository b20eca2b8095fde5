// What a VEX document does to an application (docs/spec/CONTRACT.md §13): from the statements and the
// candidates (the application's vulnerabilities known by one of their ids) to the JSON text of the
// decisions the apply writes (vex-transaction.ts, which also keeps every statement).
import { decisionChunks, type DecisionChunk, type DecisionTarget } from "./decision-rows.ts";
import { matchStatements, type Matchable } from "./vex-matching.ts";
import type { VexReading, VexStatement } from "./vex-statement.ts";

export interface VexCounts {
  /** Statements that changed at least one vulnerability. */
  applied: number;
  /** Statements that matched, changing nothing. */
  unchanged: number;
  /** Statements that matched nothing yet. */
  pending: number;
}

export interface VexPlan extends VexCounts {
  /** Made as they are written (decision-rows.ts). */
  decisions: Iterable<DecisionChunk>;
}

/** A vulnerability a statement may be about. */
export type Candidate = DecisionTarget & Matchable;

export const statementIds = (reading: VexReading): string[] => [...new Set(reading.statements.flatMap((s) => s.ids))];

export async function planVex(
  reading: VexReading,
  candidates: readonly Candidate[],
  by: string,
  at: Date,
  expiresAt?: Date,
): Promise<VexPlan> {
  const { decided, matched } = await matchStatements(reading.statements, candidates);
  const decisions = [...decided].map(([target, statement]) => ({
    target,
    decision: statement.decision,
    by,
    statement,
  }));
  const { changed, chunks } = decisionChunks(decisions, { source: "vex", at, expiresAt });
  const changing = new Set<VexStatement>(changed.map((d) => d.statement));
  return {
    applied: changing.size,
    unchanged: matched.size - changing.size,
    pending: reading.statements.length - matched.size,
    decisions: chunks,
  };
}
