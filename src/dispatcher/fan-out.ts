// Outbox → event log → deliveries. A fan-out takes the oldest committed events not yet fanned out,
// gives each its position in the event log (event-log.ts) and queues one pending delivery per
// subscription listening for its type and not disabled, in one statement. Fan-outs run one at a time,
// on whichever instance: each locks the event_log_head row before it reads its batch (so it reads
// after the previous fan-out committed) and keeps it until it commits (so the next one numbers after
// it). Positions are thus handed out, and become visible, in order: the log has no gap a reader could
// step over, and an event is fanned out exactly once.
//
// The lock and the statement are the database function fan_out_events (its migration,
// 20261127120000_fan_out_function, says why a function): one call, autocommitted, prepared once per
// connection.
import type pg from "pg";
import { processBulkTurns, type BulkTurns } from "../db/bulk-turns.ts";
import { restBetweenWrites, type RestOptions } from "../db/resting-writes.ts";
import { occurredAtIso, toLoggedEvent, type LoggedEvent, type LoggedEventRow } from "../events/event-log.ts";

/**
 * Events one fan-out statement takes at most. Small, so that a bulk fan-out (the 10,000 events of
 * a VEX) is many short statements with rests between them rather than a few long ones; live events
 * come a few at a time and fill no batch (bench/notes/2026-11-28-bulk-fan-out-rests.md).
 */
export const FAN_OUT_BATCH = 100;

/**
 * A fan-out's rests, in all, at most: past the 0.5 s a VEX's writes allow, so that the 10,000 events
 * of a VEX take turns to the last (capped at 0.5 s, their last statements ran back to back on a slow
 * minute); a backlog of 100,000 is fanned out at most 2 s later than flat out
 * (bench/notes/2026-11-28-bulk-fan-out-rests.md).
 */
const FAN_OUT_MAX_REST_MS = 2_000;

/** What fan_out_events returns: the batch's count on every row, an event on each when asked for. */
type FanOutRow = { fanned_out: number } & ({ id: null } | LoggedEventRow);

const FAN_OUT = `SELECT fanned_out, id, type, application_id, data, ${occurredAtIso("occurred_at")}, position, teams, teams_all FROM fan_out_events($1, $2)`;

/**
 * Fans out up to `batchSize` events; returns how many, and, when `returning`, the events in log order.
 * Without, the rows do not come back at all: decoding a batch is most of its cost to this process
 * (10,000 events of one VEX held the event loop some 90 ms), wasted when no one here wants them.
 */
export async function fanOutBatch(
  pool: pg.Pool,
  batchSize: number,
  returning: boolean,
): Promise<{ fannedOut: number; events: LoggedEvent[] }> {
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 2 ** 31 - 1)
    throw new RangeError(`batch size must be a positive 32-bit integer, got ${batchSize}`);
  const { rows } = await pool.query<FanOutRow>({
    name: "fan-out-events",
    text: FAN_OUT,
    values: [batchSize, returning],
  });
  const events = rows.flatMap((row) => (row.id === null ? [] : [toLoggedEvent(row)]));
  return { fannedOut: rows[0]!.fanned_out, events: events.filter((e) => e !== undefined) };
}

/** Fans out up to `batchSize` events; returns them in log order. */
export async function fanOutEvents(pool: pg.Pool, batchSize: number): Promise<LoggedEvent[]> {
  return (await fanOutBatch(pool, batchSize, true)).events;
}

/** What fanOutPending hands on after each batch. */
export interface FanOutPendingOptions {
  /** Asked before each batch: whether its events are wanted back (fanOutBatch's `returning`). */
  wanted: () => boolean;
  /** Called after each batch with its count and, when wanted, its events in log order. */
  onBatch: (fannedOut: number, events: LoggedEvent[]) => void;
  /** How the rests wait (resting-writes.ts; a test's clock). */
  rest?: Pick<RestOptions, "wait" | "now">;
  /** The bulk turns its statements take (bulk-turns.ts): the process's, unless a test's. */
  turns?: BulkTurns;
}

/**
 * Fans out every event committed so far, a batch at a time; returns how many. After a full batch the
 * next one rests as long as it took (resting-writes.ts), as a VEX's writes do: a bulk fan-out held
 * one of a small machine's two CPUs for a fifth of a second, back to back, and other callers'
 * requests waited for it (bench/notes/2026-11-28-bulk-fan-out-rests.md). Each batch takes its turn
 * with the VEX being applied meanwhile, if any (bulk-turns.ts).
 */
export async function fanOutPending(
  pool: pg.Pool,
  { wanted, onBatch, rest, turns = processBulkTurns }: FanOutPendingOptions,
): Promise<number> {
  const batch = (returning: boolean) => turns.take(() => fanOutBatch(pool, FAN_OUT_BATCH, returning));
  const takingTurns = restBetweenWrites(batch, { maxRestMs: FAN_OUT_MAX_REST_MS, ...rest });
  let total = 0;
  for (;;) {
    const { fannedOut, events } = await takingTurns(wanted());
    total += fannedOut;
    onBatch(fannedOut, events);
    if (fannedOut < FAN_OUT_BATCH) return total;
  }
}
