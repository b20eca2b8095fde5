// SIGTERM and SIGINT start a graceful shutdown; a second signal exits at once. A repeat of the
// first signal within SAME_SIGNAL_MS is that signal delivered twice, not a second one: Ctrl-C at a
// terminal reaches node directly and again through `npm start`, which forwards it to its script.
import os from "node:os";

export const STOP_SIGNALS = ["SIGTERM", "SIGINT"] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

export const SAME_SIGNAL_MS = 500;

export interface StopHandlers {
  graceful(signal: StopSignal): void;
  /** `exitCode` is the shell's for death by that signal (128 + its number). */
  immediate(signal: StopSignal, exitCode: number): void;
}

export function onStopSignals(
  handlers: StopHandlers,
  source: Pick<NodeJS.EventEmitter, "on"> = process,
  now: () => number = Date.now,
): void {
  let first: { signal: StopSignal; at: number } | undefined;
  for (const signal of STOP_SIGNALS) {
    source.on(signal, () => {
      if (!first) {
        first = { signal, at: now() };
        handlers.graceful(signal);
      } else if (signal !== first.signal || now() - first.at >= SAME_SIGNAL_MS) {
        handlers.immediate(signal, 128 + os.constants.signals[signal]);
      }
    });
  }
}
