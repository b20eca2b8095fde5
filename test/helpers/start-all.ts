/**
 * Promise.all for what a beforeAll starts together, settling only once every start has: each
 * start assigns what it made in its own `then`, so when one fails, afterAll finds and closes the
 * ones that did start (with Promise.all they would finish after jest stopped waiting, their
 * servers and pools then keeping it from exiting). Rejects with the first failure.
 */
export async function startAll(starts: readonly Promise<unknown>[]): Promise<void> {
  const failed = (await Promise.allSettled(starts)).find((r) => r.status === "rejected");
  if (failed) throw failed.reason;
}
