// Writing triage decisions onto vulnerabilities (docs/spec/CONTRACT.md §13), whatever brought them (a VEX
// document, a kept statement meeting a new finding): status and analysis, a history row per
// vulnerability and vulnerability.updated, in the caller's transaction. Each chunk of rows
// (decision-rows.ts) is one JSON parameter of one statement: 10,000 decisions are a handful.
import { writeOverlapped } from "../../db/overlapped-writes.ts";
import { runSql, type SqlRunner } from "../../db/run-sql.ts";
import { isoTimestampSql } from "../../events/event-log.ts";
import { NOTIFY_EVENTS_WRITTEN } from "../../events/outbox.ts";
import { decisionChunks, type DecisionChunk, type DecisionOrigin, type DecisionToWrite } from "./decision-rows.ts";

/**
 * The rows of $1, their history, and their events (with the outbox's NOTIFY, outbox.ts), at $2 from
 * source $3. Read as json, not jsonb: `analysis` keeps its text, which the event's data holds as it
 * is. The data (toVulnerabilityUpdatedData's, key for key) is written from the updated row: it is
 * not sent, nor parsed, a second time. Its audience is the application's owner's team, read as the
 * outbox reads it (outbox.ts: the rows share-locked, once per statement).
 */
const WRITE_DECISIONS = `
  WITH d AS (
    SELECT * FROM json_to_recordset($1::json) AS d(id uuid, previous text, status text, analysis json, event uuid)
  ), updated AS (
    UPDATE vulnerabilities v
       SET status = d.status::"VulnerabilityStatus", analysis = d.analysis::jsonb, updated_at = $2::timestamptz,
           resolved_at = CASE WHEN d.status <> 'resolved' THEN NULL WHEN v.status = 'resolved' THEN v.resolved_at ELSE $2::timestamptz END
      FROM d
     WHERE v.id = d.id
    RETURNING v.id, v.application_id, v.severity, v.title, v.created_at, v.status
  ), changed AS (
    SELECT d.*, u.application_id, u.severity, u.title, u.created_at, u.status AS new_status FROM d JOIN updated u USING (id)
  ), history AS (
    INSERT INTO vulnerability_changes (vulnerability_id, at, from_status, to_status, source, by, justification, detail)
    SELECT id, $2::timestamptz, previous::"VulnerabilityStatus", new_status, $3::"ChangeSource",
           analysis->>'by', analysis->>'justification', analysis->>'detail'
      FROM changed
  ), owners AS (
    SELECT a.id, a.owner FROM applications a WHERE a.id IN (SELECT application_id FROM updated) FOR SHARE
  ), logged AS (
    INSERT INTO events (id, type, application_id, data, occurred_at, teams, teams_all)
    SELECT c.event, 'vulnerability.updated', c.application_id,
           (SELECT to_json(e) FROM (SELECT c.id, c.severity, c.application_id AS "applicationId", c.title,
                                           ${isoTimestampSql("c.created_at")} AS "createdAt", c.new_status AS status, c.analysis) e),
           $2::timestamptz, CASE WHEN o.owner IS NOT NULL THEN ARRAY[o.owner] END, false
      FROM changed c LEFT JOIN owners o ON o.id = c.application_id
  )
  SELECT ${NOTIFY_EVENTS_WRITTEN}`;

/** One statement for the rows, their history and their events. */
export async function writeDecisionChunk(
  runner: SqlRunner,
  chunk: DecisionChunk,
  origin: DecisionOrigin,
): Promise<void> {
  await runSql(runner, WRITE_DECISIONS, [chunk.rows, origin.at, origin.source]);
}

/** Writes the decisions that change something; returns those. */
export async function writeDecisions<D extends DecisionToWrite>(
  runner: SqlRunner,
  decisions: readonly D[],
  origin: DecisionOrigin,
): Promise<D[]> {
  const { changed, chunks } = decisionChunks(decisions, origin);
  await writeOverlapped(chunks, (chunk) => writeDecisionChunk(runner, chunk, origin));
  return changed;
}
