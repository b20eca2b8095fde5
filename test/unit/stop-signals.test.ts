import { EventEmitter } from "node:events";
import { onStopSignals, SAME_SIGNAL_MS, type StopSignal } from "../../src/stop-signals.ts";

function harness() {
  const source = new EventEmitter();
  let now = 0;
  const calls: Array<[string, StopSignal, number?]> = [];
  onStopSignals(
    {
      graceful: (signal) => calls.push(["graceful", signal]),
      immediate: (signal, exitCode) => calls.push(["immediate", signal, exitCode]),
    },
    source,
    () => now,
  );
  return { calls, send: (signal: StopSignal, at: number) => ((now = at), source.emit(signal)) };
}

describe("onStopSignals", () => {
  it("shuts down gracefully on the first signal, and counts its copy from npm (same signal, moments later) as the same", () => {
    const { calls, send } = harness();
    send("SIGINT", 1000);
    send("SIGINT", 1000 + SAME_SIGNAL_MS - 1);
    expect(calls).toEqual([["graceful", "SIGINT"]]);
  });

  it("exits at once on a second signal, with the shell's code for death by it", () => {
    const { calls, send } = harness();
    send("SIGTERM", 1000);
    send("SIGTERM", 1000 + SAME_SIGNAL_MS);
    expect(calls).toEqual([
      ["graceful", "SIGTERM"],
      ["immediate", "SIGTERM", 143],
    ]);
  });

  it("takes another signal as a second one however soon it comes", () => {
    const { calls, send } = harness();
    send("SIGTERM", 1000);
    send("SIGINT", 1001);
    expect(calls).toEqual([
      ["graceful", "SIGTERM"],
      ["immediate", "SIGINT", 130],
    ]);
  });
});
