// Live subscribers first (replay-pacing.ts): while live events flow, the replays of an instance rest
// six times as long as their slices took, together; otherwise they let the loop turn at once.
import { LIVE_WINDOW_MS, REPLAY_SHARE, restBesideLive } from "../../src/events/replay-pacing.ts";

/** The waits a rest asks for, in order (each resolves at once). */
function recordingWaits() {
  const waits: number[] = [];
  return { waits, wait: async (ms: number) => void waits.push(ms) };
}
const restFor = (busyMs: number) => busyMs * (1 / REPLAY_SHARE - 1);

it("rests six times the slice while live events have reached subscribers within the window", async () => {
  const { waits, wait } = recordingWaits();
  const rest = restBesideLive(() => performance.now() - 10, wait);
  await rest(10);
  expect(restFor(10)).toBe(60);
  expect(waits).toEqual([60]);
});

it("shares one budget among the replays of the instance: two slices at once rest for both", async () => {
  const { waits, wait } = recordingWaits();
  // Both asked at the same instant (a clock of its own: on a loaded machine the real one moves between them).
  const now = 5_000;
  const rest = restBesideLive(
    () => now,
    wait,
    () => now,
  );
  await Promise.all([rest(10), rest(10)]);
  // The second waits for its own rest after the first's.
  expect(waits).toEqual([60, 120]);
});

it("turns the loop at once when no live event came within the window, or none ever did", async () => {
  for (const lastLive of [performance.now() - LIVE_WINDOW_MS - 1, -Infinity]) {
    const { waits, wait } = recordingWaits();
    const rest = restBesideLive(() => lastLive, wait);
    await rest(20);
    expect(waits).toEqual([]);
  }
});

it("waits with a timer by default", async () => {
  const rest = restBesideLive(() => performance.now());
  const started = performance.now();
  await rest(4);
  // Not less than the rest asked for, give or take the event loop's cached clock.
  expect(performance.now() - started).toBeGreaterThanOrEqual(restFor(4) - 5);
});
