// Bulk work of one process takes turns: a VEX being read, planned and written in a document thread
// and the dispatcher's fan-out of many events on the main thread never run at the same moment. Each
// already rests between its statements (resting-writes.ts); run side by side, the two still held
// both CPUs of a small machine at once, and other callers' requests waited for one
// (bench/notes/2026-11-28-bulk-turns.md). One at a time, a CPU stays free for them. The turn is a
// word of shared memory, so that the threads of the process share it (a document thread gets its
// buffer with its task).

const FREE = 0;
const HELD = 1;

/**
 * How long a turn is waited for at most, unless said: a fan-out's statement or a step of a VEX of
 * 10,000 statements takes milliseconds to a few hundred, and a holder that itself waits (for
 * Postgres's locks) holds no one longer than this.
 */
const MAX_WAIT_MS = 1_000;

export interface BulkTurnsOptions {
  /** How long to wait for the turn at most; past it the work runs anyway, beside the holder's. */
  maxWaitMs?: number;
}

export class BulkTurns {
  readonly buffer: SharedArrayBuffer;
  private readonly word: Int32Array;
  private readonly maxWaitMs: number;

  /** The turns of the threads that share `buffer` (a new one, unshared, without). */
  constructor(
    buffer: SharedArrayBuffer = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT),
    { maxWaitMs = MAX_WAIT_MS }: BulkTurnsOptions = {},
  ) {
    this.buffer = buffer;
    this.word = new Int32Array(buffer, 0, 1);
    this.maxWaitMs = maxWaitMs;
  }

  /** Runs `work` once no other bulk work of the process runs (or once the wait is over), and answers what it answered. */
  async take<T>(work: () => T | Promise<T>): Promise<T> {
    const deadline = performance.now() + this.maxWaitMs;
    while (Atomics.compareExchange(this.word, 0, FREE, HELD) !== FREE) {
      const left = deadline - performance.now();
      if (left <= 0) return await work();
      const waiting = Atomics.waitAsync(this.word, 0, HELD, left);
      if (waiting.async) await waiting.value;
    }
    try {
      return await work();
    } finally {
      Atomics.store(this.word, 0, FREE);
      Atomics.notify(this.word, 0);
    }
  }
}

/** This process's turns: the main thread's instance; document threads build theirs on its buffer. */
export const processBulkTurns = new BulkTurns();
