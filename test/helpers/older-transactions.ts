// Postgres prunes a row's old versions, and marks its dead index entries, only once no transaction
// on the server may still see them, whatever its database: another test file's transaction, open
// meanwhile in a database of its own, kept them (a run of 2026-12-02 with files side by side: a
// fan-out reading 235 blocks for a batch of one, a third of the HOT updates lost). A test that
// measures pruning waits first for every transaction older than what it wrote to end.
import type pg from "pg";
import { eventually } from "./scan-engines.ts";

/** Resolves once no other backend's transaction or snapshot is as old as a transaction started now. */
export async function untilOlderTransactionsEnd(db: pg.Pool | pg.PoolClient, timeoutMs = 30_000): Promise<void> {
  const { rows } = await db.query<{ now: string }>("SELECT txid_current()::text AS now");
  await eventually(async () => {
    const older = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE pid <> pg_backend_pid()
          AND greatest(age(backend_xid), age(backend_xmin)) >= age(($1::bigint % 4294967296)::text::xid)`,
      [rows[0]!.now],
    );
    return older.rows[0]!.n === 0;
  }, timeoutMs);
}
