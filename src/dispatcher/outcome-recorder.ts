// Group commit for attempt outcomes: whatever finishes while a batch is being written goes into the
// next one, so under load one statement records dozens of attempts and an idle dispatcher still
// records each at once. A batch that fails on a transient conflict (deadlock, serialization) is
// written again; one that still fails is logged, and its deliveries stay leased until the lease
// expires and another pass sends them again (at least once, never lost).
import type pg from "pg";
import type { DatabaseHealth } from "../db/database-health.ts";
import type { Logger } from "../log.ts";
import { recordOutcomes, type Outcome, type RecordedStatus } from "./record-outcomes.ts";

const MAX_BATCH = 500;
const WRITE_ATTEMPTS = 3;
// serialization_failure, deadlock_detected, and foreign_key_violation: a delivery deleted (with its
// subscription) between the statement's check and its insert; written again, it is left out.
const TRANSIENT = new Set(["40001", "40P01", "23503"]);

/** What became of an outcome: its new status, or undefined when the delivery had left this instance. */
export type Recorded = RecordedStatus | undefined;

export interface OutcomeRecorder {
  record(outcome: Outcome): Promise<Recorded>;
  /** Resolves once everything handed over so far is written (or given up). */
  drain(): Promise<void>;
}

interface Entry {
  outcome: Outcome;
  done: (recorded: Recorded) => void;
}

export function createOutcomeRecorder(deps: {
  pool: pg.Pool;
  owner: string;
  log: Logger;
  health?: Pick<DatabaseHealth, "failed">;
}): OutcomeRecorder {
  let queue: Entry[] = [];
  let writing: Promise<void> | undefined;

  async function write(batch: Entry[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const rows = await recordOutcomes(
          deps.pool,
          deps.owner,
          batch.map((e) => e.outcome),
        );
        const changed = new Map(rows.map((r) => [r.id, r.status]));
        for (const e of batch) e.done(changed.get(e.outcome.deliveryId));
        return;
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (attempt < WRITE_ATTEMPTS && code && TRANSIENT.has(code)) continue;
        if (!deps.health?.failed(err)) {
          deps.log.error(
            { err, deliveries: batch.length },
            "could not record webhook attempts; their deliveries are sent again once their leases expire",
          );
        }
        for (const e of batch) e.done(undefined);
        return;
      }
    }
  }

  function writeAll(): Promise<void> {
    writing ??= (async () => {
      // Yield once so outcomes finishing in the same turn of the event loop share the first batch.
      await new Promise<void>((resolve) => setImmediate(resolve));
      while (queue.length > 0) {
        const batch = queue.slice(0, MAX_BATCH);
        queue = queue.slice(batch.length);
        await write(batch);
      }
      writing = undefined;
    })();
    return writing;
  }

  return {
    record(outcome) {
      return new Promise<Recorded>((done) => {
        queue.push({ outcome, done });
        void writeAll();
      });
    },
    async drain() {
      while (writing) await writing;
    },
  };
}
