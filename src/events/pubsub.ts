// Live events for subscribers on this instance: the tail of the event log (event-log.ts), delivered in
// log order, each event once. Sources only bring news of the log: that it grew (the fan-out's NOTIFY
// through Postgres), or events themselves (the fan-out on this instance, Redis messages from the
// others). The bus delivers what follows the last position it delivered and reads from Postgres
// whatever it did not receive, so a lost notification, a Redis outage or a reconnection delays events
// but never loses or repeats one. It starts with the first subscriber.
import type { DatabaseHealth } from "../db/database-health.ts";
import { createCoalescingLoop } from "../dispatcher/coalescing-loop.ts";
import type { Logger } from "../log.ts";
import type { LoggedEvent } from "./event-log.ts";

/** What a source tells the bus. */
export interface SourceHooks {
  /** Events of the log, in order (a source may repeat or skip: the bus reads the gaps). */
  offer(events: readonly LoggedEvent[]): void;
  /** The log grew (up to `head` when known): read what follows. */
  grew(head?: number): void;
  /** The source's connection is gone; the bus restarts it. */
  lost(err: unknown): void;
}

/** Where news of the log comes from; `start` resolves once it is being received. */
export interface EventSource {
  start(hooks: SourceHooks): Promise<void>;
  stop(): Promise<void>;
}

/** How the bus reads the log itself. */
export interface LogReader {
  head(): Promise<number>;
  /** A page of events after `position`, in order; `readThrough` is where the next page starts. */
  after(position: number): Promise<{ events: LoggedEvent[]; readThrough: number; atHead: boolean }>;
}

export interface EventBus {
  /**
   * Every event delivered after this call, optionally narrowed; iteration ends as soon as the
   * consumer returns. Resolves once the bus is receiving.
   */
  subscribe(accept?: (event: LoggedEvent) => boolean): Promise<AsyncIterableIterator<LoggedEvent>>;
  /** Resolves once the source is receiving (tests wait on it before committing). */
  listening(): Promise<void>;
  /** The position of the last event delivered to subscribers (0 before the bus started). */
  position(): number;
  /** Events fanned out by this instance, delivered without waiting for a notification. */
  offer(events: readonly LoggedEvent[]): void;
  /** Whether offered events are taken: the bus receives from its first subscriber on (before, it would drop them). */
  receiving(): boolean;
  /** When (performance.now()) an event last reached a subscriber; -Infinity if none ever has. */
  lastDeliveredAt(): number;
  close(): Promise<void>;
}

const RESTART_DELAY_MS = 1000;
const READ_RETRY_MS = 1000;

export function createEventBus(deps: {
  source: EventSource;
  log: LogReader;
  logger: Logger;
  /** With it, a read that failed because the database is away is tried again once it is back. */
  health?: Pick<DatabaseHealth, "failed" | "whenAvailable">;
}): EventBus {
  const subscribers = new Set<BusSubscriber>();
  let started: Promise<void> | undefined;
  let receiving = false;
  let closed = false;
  let last = 0;
  let positioned = false;
  let lastDeliveredAt = -Infinity;
  let retryTimer: NodeJS.Timeout | undefined;

  function deliver(event: LoggedEvent): void {
    last = event.position;
    if (subscribers.size > 0) lastDeliveredAt = performance.now();
    for (const subscriber of subscribers) subscriber.offer(event);
  }

  /** Reads and delivers everything after `last`, one read at a time, once more if woken meanwhile. */
  const reading = createCoalescingLoop({
    running: () => receiving,
    async step() {
      for (;;) {
        const page = await deps.log.after(last);
        for (const event of page.events) if (event.position > last) deliver(event);
        last = Math.max(last, page.readThrough);
        if (page.atHead || !receiving) return;
      }
    },
    onError(err) {
      if (deps.health?.failed(err)) {
        // The database is away (its health logs that once): read on when it is back.
        afterDatabaseReturns(catchUp);
        return;
      }
      deps.logger.warn({ err }, "could not read the event log; retrying");
      clearTimeout(retryTimer);
      retryTimer = setTimeout(catchUp, READ_RETRY_MS);
      retryTimer.unref();
    },
  });
  const catchUp = reading.wake;

  const hooks: SourceHooks = {
    offer(events) {
      if (!receiving) return;
      // Even while a read is in flight: what it brings back that was delivered meanwhile is skipped
      // (deliver only what follows `last`). Waiting for it instead cost every live event a round trip,
      // since the fan-out's NOTIFY often starts a read before its own events are offered here.
      for (const event of events) {
        if (event.position <= last) continue;
        if (event.position !== last + 1) return catchUp(); // a gap: the log has what is missing
        deliver(event);
      }
    },
    grew(head) {
      if (head === undefined || head > last) catchUp();
    },
    lost(err) {
      receiving = false;
      started = undefined;
      const restart = () => {
        if (!closed) listening().catch(() => {}); // a failure reports itself through lost() again
      };
      if (deps.health?.failed(err)) return afterDatabaseReturns(restart);
      deps.logger.warn({ err }, "event source connection lost; restarting it");
      setTimeout(restart, RESTART_DELAY_MS).unref();
    },
  };

  /** Runs `then` once the database is back (after a short wait, while its health is still checking). */
  function afterDatabaseReturns(then: () => void): void {
    setTimeout(() => void deps.health!.whenAvailable().then(() => closed || then()), READ_RETRY_MS / 4).unref();
  }

  function listening(): Promise<void> {
    if (closed) return Promise.reject(new Error("event bus closed"));
    started ??= (async () => {
      // The first start begins at the head; a restart reads on from where delivery stopped.
      if (!positioned) {
        last = await deps.log.head();
        positioned = true;
      }
      await deps.source.start(hooks);
      receiving = true;
      catchUp(); // what was logged before the source was receiving
    })().catch((err: unknown) => {
      hooks.lost(err);
      throw err;
    });
    return started;
  }

  return {
    listening,
    position: () => last,
    offer: (events) => hooks.offer(events),
    receiving: () => receiving,
    lastDeliveredAt: () => lastDeliveredAt,
    async subscribe(accept = () => true) {
      await listening();
      const subscriber = new BusSubscriber(accept, (s) => subscribers.delete(s));
      subscribers.add(subscriber);
      return subscriber;
    },
    async close() {
      closed = true;
      receiving = false;
      started = undefined;
      clearTimeout(retryTimer);
      await reading.idle();
      for (const subscriber of subscribers) subscriber.end();
      await deps.source.stop();
    },
  };
}

/**
 * One subscriber's queue. Not an async generator: a generator's return() waits for its pending
 * next(), so ending a subscription would hang until the next event; this one ends at once.
 */
class BusSubscriber implements AsyncIterableIterator<LoggedEvent> {
  private readonly queue: LoggedEvent[] = [];
  private waiting: ((step: IteratorResult<LoggedEvent>) => void) | undefined;
  private done = false;

  constructor(
    private readonly accept: (event: LoggedEvent) => boolean,
    private readonly leave: (s: BusSubscriber) => void,
  ) {}

  offer(event: LoggedEvent): void {
    if (this.done || !this.accept(event)) return;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = undefined;
      resolve({ value: event, done: false });
    } else {
      this.queue.push(event);
    }
  }

  end(): void {
    if (this.done) return;
    this.done = true;
    this.queue.length = 0;
    this.leave(this);
    const resolve = this.waiting;
    this.waiting = undefined;
    resolve?.({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<LoggedEvent>> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve({ value: queued, done: false });
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => (this.waiting = resolve));
  }

  return(): Promise<IteratorResult<LoggedEvent>> {
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator]() {
    return this;
  }
}
