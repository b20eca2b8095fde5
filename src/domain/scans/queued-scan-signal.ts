// Wakes long-polling agents (POST /scan-jobs/claim?waitSeconds=N) when a scan may have become
// claimable: queued, released, or back from a lapsed lease. One LISTEN connection per instance,
// however many agents wait; each waiter then tries its claim again (SKIP LOCKED sorts out who wins).
// It listens from the first wait on (an instance no agent polls holds no connection for it).
// Stopping it wakes every waiter for good, so a long poll never holds up a shutdown.
import { listen, type Listening, type ListenSource } from "../../db/listen.ts";
import type { Logger } from "../../log.ts";
import { SCAN_QUEUED_CHANNEL } from "./scan-queued-channel.ts";

export interface QueuedScanWait {
  /** Settles at the next wake-up, after `ms`, when `signal` aborts, or when the signal is stopped. */
  until(ms: number, signal?: AbortSignal): Promise<void>;
  cancel(): void;
}

export interface QueuedScanSignal {
  /** Subscribe before looking for a scan, then wait: a NOTIFY in between is not missed. */
  subscribe(): QueuedScanWait;
  /** True once stopped: long polls answer at once. */
  readonly stopped: boolean;
}

export interface QueuedScanListener extends QueuedScanSignal {
  readonly name: string;
  start(): void;
  stop(): Promise<void>;
}

/** `listenOn`: the instance's shared listener, or a session's URL or pool. */
export function createQueuedScanSignal(listenOn: ListenSource, log: Logger): QueuedScanListener {
  const waiting = new Set<() => void>();
  let listening: Listening | undefined;
  let stopped = false;

  const wakeAll = () => {
    const wake = [...waiting];
    waiting.clear();
    for (const resolve of wake) resolve();
  };

  return {
    name: "queued-scan-signal",
    get stopped() {
      return stopped;
    },
    subscribe() {
      let woken = stopped;
      const wake = () => (woken = true);
      let resolveWait: (() => void) | undefined;
      const onWake = () => {
        wake();
        resolveWait?.();
      };
      if (!stopped) {
        waiting.add(onWake);
        // Whatever was queued while nobody listened: the waiters look again once LISTEN is on.
        listening ??= listen(listenOn, [SCAN_QUEUED_CHANNEL], wakeAll, { log, onListening: wakeAll });
      }
      return {
        until(ms, signal) {
          if (woken || signal?.aborted) return Promise.resolve();
          return new Promise<void>((resolve) => {
            const done = () => {
              clearTimeout(timer);
              signal?.removeEventListener("abort", done);
              waiting.delete(onWake);
              resolve();
            };
            const timer = setTimeout(done, ms);
            signal?.addEventListener("abort", done, { once: true });
            resolveWait = done;
          });
        },
        cancel() {
          waiting.delete(onWake);
          resolveWait?.();
        },
      };
    },
    start() {
      stopped = false;
    },
    async stop() {
      stopped = true;
      wakeAll();
      await listening?.close();
      listening = undefined;
    },
  };
}
