// The transaction that applies a VEX document (docs/spec/CONTRACT.md §13), run in the thread that read the
// document (report-worker.ts) on a connection of its own: every change, its history row and its
// vulnerability.updated, under the application's lock as a scan's results are (a VEX and a scan of
// one application never interleave). Nothing of a large VEX then runs on the service's event loop,
// neither its JavaScript nor the sending of its rows (several MiB of parameters).
import type pg from "pg";
import { BulkTurns } from "../../db/bulk-turns.ts";
import { writeOverlapped } from "../../db/overlapped-writes.ts";
import { inTransaction } from "../../db/pg-transaction.ts";
import { restBetweenWrites } from "../../db/resting-writes.ts";
import { writeDecisionChunk } from "./decisions.ts";
import { keptStatementRows } from "./kept-statement-rows.ts";
import { keepStatementRows } from "./kept-statements.ts";
import { planVex, statementIds, type Candidate, type VexCounts } from "./vex-plan.ts";
import type { VexReading } from "./vex-statement.ts";

/**
 * The application's vulnerabilities known by one of the ids. Not `aliases && ids`: that compares
 * every alias with every id (10,000 × 10,000 took seconds). Each row's aliases are looked up in the
 * ids as one array constant, which Postgres hashes once (an `= ANY` of a constant array): one pass
 * over the application's rows, whatever the statistics say. A join of the rows with their aliases
 * and the ids was planned by the statistics, and with none yet for a new application's rows (an
 * upload just before the VEX) it became a nested loop rescanning the application per row: 7 s for
 * 2,600 here, minutes beside the suite in CI. Plain rows, parsed here by pg: Postgres writes 10,000
 * of them in a fifth of the time it took to build them as one JSON text
 * (bench/notes/2026-11-27-vex-warm-thread.md). Only what matching and deciding read: the events'
 * data comes from the updated rows (decisions.ts).
 */
const CANDIDATES = `
  SELECT id, status, analysis, aliases, location
    FROM vulnerabilities v
   WHERE v.application_id = $1::uuid
     AND EXISTS (SELECT 1 FROM unnest(v.aliases) AS alias WHERE alias = ANY ($2::text[]))`;

export interface VexTarget {
  applicationId: string;
  /** Who sent the document: the token's subject. */
  by: string;
  at: Date;
  /** When its accepting decisions end (docs/spec/CONTRACT.md §19). */
  expiresAt?: Date;
}

/**
 * How long into the apply its writes may rest. On a fast machine an apply of 10,000 statements has
 * written everything by then, rests included; on a slow one, whose writes take longer, the last of
 * them follow one another instead, so that the rests are not what takes a large apply past what its
 * caller waits for (bench/notes/2026-11-27-vex-plan-then-write.md).
 */
const RESTS_WITHIN_MS = 1_500;

/**
 * Applies the reading. Its stretches of work (its statements' rows built, the candidates read and
 * planned, each write) take `turns` with the process's other bulk work (bulk-turns.ts). The
 * application's lock is waited for holding no turn: the apply that holds the lock may be waiting
 * for the turn.
 */
export async function applyVexReading(
  client: pg.ClientBase,
  reading: VexReading,
  { applicationId, by, at, expiresAt }: VexTarget,
  turns = new BulkTurns(),
): Promise<VexCounts> {
  const restUntil = performance.now() + RESTS_WITHIN_MS;
  const kept = await turns.take(() => keptStatementRows(reading.statements));
  return inTransaction(client, async () => {
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1::text, 0))", [applicationId]);
    const plan = await turns.take(async () => {
      const { rows } = await client.query<Candidate>(CANDIDATES, [applicationId, statementIds(reading)]);
      return planVex(reading, rows, by, at, expiresAt);
    });
    // Every statement is kept, whatever it matches, then the decisions are written, all taking turns
    // with other callers (resting-writes.ts): Postgres is left free between the chunks. None is
    // written while this thread plans, the longest stretch of its own work: the two overlapping held
    // both CPUs of a small machine, and other callers' requests waited
    // (bench/notes/2026-11-27-vex-plan-then-write.md).
    function* writes(): Iterable<() => Promise<unknown>> {
      for (const chunk of kept) yield () => turns.take(() => keepStatementRows(client, applicationId, chunk, by, at));
      // The decisions' chunks are made one at a time, each while the one before is written.
      for (const chunk of plan.decisions)
        yield () => turns.take(() => writeDecisionChunk(client, chunk, { source: "vex", at }));
    }
    await writeOverlapped(
      writes(),
      restBetweenWrites((write) => write(), { restUntil }),
    );
    return { applied: plan.applied, unchanged: plan.unchanged, pending: plan.pending };
  });
}
