// What the database is doing when a test overruns what it takes: every other backend of the test's
// database, its state, what it waits for, who blocks it and its statement. Printed, not asserted: the
// lead for a hang seen beside the whole suite in CI and never alone.
import pg from "pg";

export async function databaseActivity(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT pid, state, wait_event_type, wait_event, pg_blocking_pids(pid) AS blocked_by,
              now() - xact_start AS in_transaction, left(query, 200) AS query
         FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid()
        ORDER BY xact_start NULLS LAST`,
    );
    return rows.map((row) => JSON.stringify(row)).join("\n");
  } finally {
    await client.end();
  }
}

/** Prints the database's activity once if `stop` was not called within `ms`; returns `stop`. */
export function reportActivityAfter(url: string, ms: number, what: string): () => void {
  const timer = setTimeout(() => {
    databaseActivity(url).then(
      (activity) => console.error(`${what}: still running after ${ms} ms; the database's backends:\n${activity}`),
      (err: unknown) => console.error(`${what}: still running after ${ms} ms; pg_stat_activity failed: ${String(err)}`),
    );
  }, ms);
  return () => clearTimeout(timer);
}
