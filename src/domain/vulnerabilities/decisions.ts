// Writing triage decisions onto vulnerabilities (CONTRACT §13), whatever brought them (a VEX
// document, a kept statement meeting a new finding): status and analysis, a history row per
// vulnerability and vulnerability.updated, in the caller's transaction. Each chunk of rows
// (decision-rows.ts) is one JSON parameter: 10,000 decisions are a handful of statements.
import { writeOverlapped } from "../../db/overlapped-writes.ts";
import { runSql, type SqlRunner } from "../../db/run-sql.ts";
import { recordEventRows } from "../../events/outbox.ts";
import { decisionChunks, type DecisionChunk, type DecisionOrigin, type DecisionToWrite } from "./decision-rows.ts";

/** The rows ($1, JSON text read as jsonb, as kept-statements.ts says why), and their history from the same parameter. */
const WRITE_DECISIONS = `
  WITH d AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS d(id uuid, previous text, status text, analysis jsonb)
  ), updated AS (
    UPDATE vulnerabilities v
       SET status = d.status::"VulnerabilityStatus", analysis = d.analysis, updated_at = $2::timestamptz,
           resolved_at = CASE WHEN d.status <> 'resolved' THEN NULL WHEN v.status = 'resolved' THEN v.resolved_at ELSE $2::timestamptz END
      FROM d
     WHERE v.id = d.id
    RETURNING v.id
  )
  INSERT INTO vulnerability_changes (vulnerability_id, at, from_status, to_status, source, by, justification, detail)
  SELECT d.id, $2::timestamptz, d.previous::"VulnerabilityStatus", d.status::"VulnerabilityStatus", $3::"ChangeSource",
         d.analysis->>'by', d.analysis->>'justification', d.analysis->>'detail'
    FROM d JOIN updated USING (id)`;

/** One statement for the rows and their history; then their events. */
export async function writeDecisionChunk(runner: SqlRunner, chunk: DecisionChunk, origin: DecisionOrigin): Promise<void> {
  await runSql(runner, WRITE_DECISIONS, [chunk.decisions, origin.at, origin.source]);
  await recordEventRows(runner, chunk.events);
}

/** Writes the decisions that change something; returns those. */
export async function writeDecisions<D extends DecisionToWrite>(runner: SqlRunner, decisions: readonly D[], origin: DecisionOrigin): Promise<D[]> {
  const { changed, chunks } = decisionChunks(decisions, origin);
  await writeOverlapped(chunks, (chunk) => writeDecisionChunk(runner, chunk, origin));
  return changed;
}
