// Triage decisions as the rows that write them (decisions.ts): only those that change their
// vulnerability, as JSON text a chunk at a time. Pure, so that a worker thread can build a VEX
// apply's 10,000 (vex-plan.ts) off the service's event loop. Each row carries its analysis and the
// id of its vulnerability.updated; the event's data is written by Postgres from the updated row
// (decisions.ts), so no row's data is built, sent and parsed twice.
import type { Vulnerability } from "../../generated/prisma/client.ts";
import { newId } from "../../ids.ts";
import { chunksOf } from "../chunks.ts";
import {
  analysisOfDecision,
  sameDecision,
  STATUS_OF_STATE,
  type Analysis,
  type AnalysisSource,
  type Decision,
} from "./analysis.ts";

/** Rows per statement: 10,000 decisions are four statements (and 100,000 forty). */
const CHUNK = 2_500;

/** What a decision needs of the vulnerability it is about: whether it changes it (the event's data comes from Postgres). */
export type DecisionTarget = Pick<Vulnerability, "id" | "status" | "analysis">;

export interface DecisionToWrite {
  target: DecisionTarget;
  decision: Decision;
  /** Who made it: the token's subject that sent the VEX. */
  by: string | null;
}

export interface DecisionOrigin {
  source: AnalysisSource;
  at: Date;
  /** When the accepting decisions end (docs/spec/CONTRACT.md §19); none when absent. */
  expiresAt?: Date;
}

/** One statement's worth: each vulnerability's new status and analysis, and its event's id, as JSON text. */
export interface DecisionChunk {
  rows: string;
}

/** When the decision would end, if it accepts and the origin gives an end. */
const expiryOf = (decision: Decision, origin: DecisionOrigin): string | undefined =>
  STATUS_OF_STATE[decision.state] === "accepted" ? origin.expiresAt?.toISOString() : undefined;

/** Whether the decision would change the vulnerability (its status, its analysis or when it ends). */
export function changes({ target, decision }: DecisionToWrite, origin: DecisionOrigin): boolean {
  const analysis = target.analysis as Analysis | null;
  return (
    target.status !== STATUS_OF_STATE[decision.state] ||
    !sameDecision(analysis, decision) ||
    analysis?.expiresAt !== expiryOf(decision, origin)
  );
}

/**
 * The decisions that change something, and the chunks that write them, each made as it is asked
 * for (so that the next can be made while the previous is written).
 */
export function decisionChunks<D extends DecisionToWrite>(
  decisions: readonly D[],
  origin: DecisionOrigin,
): { changed: D[]; chunks: Iterable<DecisionChunk> } {
  const changed = decisions.filter((d) => changes(d, origin));
  return { changed, chunks: chunksMade(changed, origin) };
}

const withExpiry = (decision: Decision, origin: DecisionOrigin) => {
  const expiresAt = expiryOf(decision, origin);
  return expiresAt ? { expiresAt } : {};
};

function* chunksMade(changed: readonly DecisionToWrite[], origin: DecisionOrigin): Generator<DecisionChunk> {
  const at = origin.at.toISOString();
  for (const chunk of chunksOf(changed, CHUNK)) {
    const rows = chunk.map(({ target, decision, by }) => ({
      id: target.id,
      previous: target.status,
      status: STATUS_OF_STATE[decision.state],
      // In the order of the view's keys: the event's data holds this text as it is (decisions.ts).
      analysis: { ...analysisOfDecision(decision, origin.source, by, at), ...withExpiry(decision, origin) },
      // Made here, in the order of the rows, as every event's id is (event-rows.ts): the log lists them in that order.
      event: newId(),
    }));
    yield { rows: JSON.stringify(rows) };
  }
}
