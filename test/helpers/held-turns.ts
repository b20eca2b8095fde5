// Bulk turns (src/db/bulk-turns.ts) held by the test's own thread until it releases them: bulk work
// given these turns waits meanwhile (up to a minute, well past any test's look).
import { BulkTurns } from "../../src/db/bulk-turns.ts";

export function heldTurns() {
  const turns = new BulkTurns(undefined, { maxWaitMs: 60_000 });
  let free!: () => void;
  const held = turns.take(() => new Promise<void>((resolve) => (free = resolve)));
  return {
    turns,
    async release() {
      free();
      await held;
    },
  };
}
