// A transaction on a pg client: committed when `work` resolves, rolled back when it throws.
import type pg from "pg";

export async function inTransaction<T>(client: pg.ClientBase, work: () => Promise<T>): Promise<T> {
  await client.query("BEGIN");
  try {
    const result = await work();
    await client.query("COMMIT");
    return result;
  } catch (err) {
    // A connection that failed cannot roll back; Postgres does, when it sees the connection go.
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  }
}
