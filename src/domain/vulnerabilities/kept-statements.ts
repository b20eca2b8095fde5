// The VEX statements an application received, kept (vex_statements) so that a finding that
// appears later is decided by them in the transaction that records it (CONTRACT §13: a statement
// that matches nothing yet is pending, and applied when a finding with its id appears). A
// statement about the same ids and products as an earlier one replaces it.
import { createHash } from "node:crypto";
import type { Tx } from "../../db/client.ts";
import { newId } from "../../ids.ts";
import { chunksOf } from "../chunks.ts";
import { nextTurn } from "../next-turn.ts";
import { STATUS_OF_STATE, type Decision } from "./analysis.ts";
import { writeDecisions, type DecisionTarget } from "./decisions.ts";
import { matchStatements, type Matchable } from "./vex-matching.ts";
import type { VexStatement } from "./vex-statement.ts";

const CHUNK = 250;

/** Same vulnerability ids and products, same key: the later statement replaces the earlier. */
const keyOf = (s: Pick<VexStatement, "ids" | "products">) =>
  createHash("sha256")
    .update(JSON.stringify([[...s.ids].sort(), s.products && [...s.products].sort()]))
    .digest("base64url");

export async function keepStatements(tx: Tx, applicationId: string, statements: readonly VexStatement[], by: string, at: Date): Promise<void> {
  // Within one document the last statement of a key is the one in force.
  const latest = new Map<string, VexStatement>();
  for (const slice of chunksOf(statements, CHUNK)) {
    for (const s of slice) latest.set(keyOf(s), s);
    await nextTurn();
  }
  for (const chunk of chunksOf([...latest], CHUNK)) {
    await tx.$executeRaw`
      INSERT INTO vex_statements (id, application_id, key, vulnerability_ids, products, status, analysis, by, recorded_at)
      SELECT s.id, ${applicationId}::uuid, s.key, ARRAY(SELECT jsonb_array_elements_text(s.ids)),
             CASE WHEN s.products IS NULL THEN NULL ELSE ARRAY(SELECT jsonb_array_elements_text(s.products)) END,
             s.status::"VulnerabilityStatus", s.decision, ${by}, ${at}
        FROM unnest(${chunk.map(() => newId())}::uuid[], ${chunk.map(([key]) => key)}::text[],
                    ${chunk.map(([, s]) => JSON.stringify(s.ids))}::jsonb[], ${chunk.map(([, s]) => (s.products ? JSON.stringify(s.products) : null))}::jsonb[],
                    ${chunk.map(([, s]) => JSON.stringify(s.decision))}::jsonb[], ${chunk.map(([, s]) => STATUS_OF_STATE[s.decision.state])}::text[])
          AS s(id, key, ids, products, decision, status)
      ON CONFLICT (application_id, key) DO UPDATE
        SET vulnerability_ids = excluded.vulnerability_ids, products = excluded.products, status = excluded.status, analysis = excluded.analysis,
            by = excluded.by, recorded_at = excluded.recorded_at
      -- The same statement again is the decision it was: kept as first made, and no row rewritten.
      WHERE (vex_statements.analysis, vex_statements.by) IS DISTINCT FROM (excluded.analysis, excluded.by)`;
  }
}

interface KeptRow {
  vulnerability_ids: string[];
  products: string[] | null;
  analysis: Decision;
  by: string;
  recorded_at: Date;
}

/**
 * Decides the application's new vulnerabilities by the statements kept for it: each one the
 * latest statement matching it decides, as its author (vulnerability.updated, a history row).
 */
export async function decideNewVulnerabilities(tx: Tx, applicationId: string, created: readonly (DecisionTarget & Matchable)[]): Promise<number> {
  const ids = [...new Set(created.flatMap((v) => v.aliases))];
  if (ids.length === 0) return 0;
  const kept = await tx.$queryRaw<KeptRow[]>`
    SELECT vulnerability_ids, products, analysis, by, recorded_at FROM vex_statements
     WHERE application_id = ${applicationId}::uuid
       AND id IN (SELECT s.id FROM vex_statements s, unnest(s.vulnerability_ids) AS vid
                   WHERE s.application_id = ${applicationId}::uuid AND vid IN (SELECT unnest(${ids}::text[])))
     ORDER BY recorded_at, id`;
  if (kept.length === 0) return 0;
  const statements = kept.map((row) => ({ ids: row.vulnerability_ids, products: row.products, madeAt: row.recorded_at.getTime(), row }));
  const { decided } = await matchStatements(statements, created);
  const decisions = [...decided].map(([target, { row }]) => ({ target, decision: row.analysis, by: row.by }));
  return (await writeDecisions(tx, decisions, { source: "vex", at: new Date() })).length;
}
