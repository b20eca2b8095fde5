// Live subscribers first (replay-pacing.ts): while live events flow, the replays of an instance rest
// three times as long as their slices took, together; otherwise they let the loop turn at once.
import { LIVE_WINDOW_MS, REPLAY_SHARE, restBesideLive } from "../../src/events/replay-pacing.ts";

const timed = async (rest: Promise<void>) => {
  const started = performance.now();
  await rest;
  return performance.now() - started;
};
const restFor = (busyMs: number) => busyMs * (1 / REPLAY_SHARE - 1);

it("rests three times the slice while live events have reached subscribers within the window", async () => {
  const rest = restBesideLive(() => performance.now() - 10);
  // Timers fire no earlier than asked, to the millisecond.
  expect(await timed(rest(10))).toBeGreaterThanOrEqual(restFor(10) - 1);
});

it("shares one budget among the replays of the instance: two slices at once rest for both", async () => {
  const rest = restBesideLive(() => performance.now());
  const [first, second] = await Promise.all([timed(rest(10)), timed(rest(10))]);
  expect(first).toBeGreaterThanOrEqual(restFor(10) - 1);
  expect(second).toBeGreaterThanOrEqual(2 * restFor(10) - 1);
});

it("turns the loop at once when no live event came within the window, or none ever did", async () => {
  for (const lastLive of [performance.now() - LIVE_WINDOW_MS - 1, -Infinity]) {
    const rest = restBesideLive(() => lastLive);
    // setImmediate: before a timer due after the rest a live replay would take, unless the loop stalls that long.
    const order: string[] = [];
    const timer = new Promise<void>((resolve) => setTimeout(() => resolve(void order.push("timer")), restFor(20)));
    await rest(20).then(() => order.push("rest"));
    await timer;
    expect(order).toEqual(["rest", "timer"]);
  }
});
