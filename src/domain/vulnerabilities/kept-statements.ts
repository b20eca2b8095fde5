// The VEX statements an application received, kept (vex_statements) so that a finding that
// appears later is decided by them in the transaction that records it (docs/spec/CONTRACT.md §13: a statement
// that matches nothing yet is pending, and applied when a finding with its id appears). A
// statement about the same ids and products as an earlier one replaces it.
import type { Tx } from "../../db/client.ts";
import { runSql, type SqlRunner } from "../../db/run-sql.ts";
import type { Decision } from "./analysis.ts";
import type { DecisionTarget } from "./decision-rows.ts";
import { writeDecisions } from "./decisions.ts";
import { matchStatements, type Matchable } from "./vex-matching.ts";

/**
 * The statements of $2 (kept-statement-rows.ts, as JSON text), for application $1, as $3 made them
 * at $4. Read as jsonb (jsonb_to_recordset): in the bench's applies no slower than
 * json_to_recordset, and faster on a new connection (bench/notes/2026-11-27-vex-warm-thread.md). The
 * same statement again is left out before the insert: ON CONFLICT would lock its row, writing to its
 * page and to the WAL, only to change nothing (the apply holds the application's lock: no one else
 * keeps its statements meanwhile). It is looked up by its key, one row's subquery at a time, not
 * joined: the planner cannot make that a join, whose plan would rest on statistics. No statistics
 * hold a new application's statements, and `NOT EXISTS` was then planned as a nested loop comparing
 * every statement with every one kept (5.6 s for a chunk of 2,500 against 10,000;
 * bench/notes/2026-11-27-vex-kept-statements.md).
 */
const KEEP_STATEMENTS = `
  INSERT INTO vex_statements (id, application_id, key, vulnerability_ids, products, status, analysis, by, recorded_at)
  SELECT s.id, $1::uuid, s.key, s.ids, s.products, s.status::"VulnerabilityStatus", s.decision, $3::text, $4::timestamptz
    FROM jsonb_to_recordset($2::jsonb) AS s(id uuid, key text, ids text[], products text[], decision jsonb, status text)
   WHERE (SELECT (k.analysis, k.by) IS NOT DISTINCT FROM (s.decision, $3::text)
            FROM vex_statements k WHERE k.application_id = $1::uuid AND k.key = s.key) IS NOT TRUE
  ON CONFLICT (application_id, key) DO UPDATE
    SET vulnerability_ids = excluded.vulnerability_ids, products = excluded.products, status = excluded.status, analysis = excluded.analysis,
        by = excluded.by, recorded_at = excluded.recorded_at
  -- The same statement again is the decision it was: kept as first made, and no row rewritten.
  WHERE (vex_statements.analysis, vex_statements.by) IS DISTINCT FROM (excluded.analysis, excluded.by)`;

export async function keepStatementRows(
  runner: SqlRunner,
  applicationId: string,
  rows: string,
  by: string,
  at: Date,
): Promise<void> {
  await runSql(runner, KEEP_STATEMENTS, [applicationId, rows, by, at]);
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
export async function decideNewVulnerabilities(
  tx: Tx,
  applicationId: string,
  created: readonly (DecisionTarget & Matchable)[],
): Promise<number> {
  const ids = [...new Set(created.flatMap((v) => v.aliases))];
  if (ids.length === 0) return 0;
  const kept = await tx.$queryRaw<KeptRow[]>`
    SELECT vulnerability_ids, products, analysis, by, recorded_at FROM vex_statements
     WHERE application_id = ${applicationId}::uuid
       AND id IN (SELECT s.id FROM vex_statements s, unnest(s.vulnerability_ids) AS vid
                   WHERE s.application_id = ${applicationId}::uuid AND vid IN (SELECT unnest(${ids}::text[])))
     ORDER BY recorded_at, id`;
  if (kept.length === 0) return 0;
  const statements = kept.map((row) => ({
    ids: row.vulnerability_ids,
    products: row.products,
    madeAt: row.recorded_at.getTime(),
    row,
  }));
  const { decided } = await matchStatements(statements, created);
  const decisions = [...decided].map(([target, { row }]) => ({ target, decision: row.analysis, by: row.by }));
  return (await writeDecisions(tx, decisions, { source: "vex", at: new Date() })).length;
}
