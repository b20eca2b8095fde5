// restBetweenWrites (src/db/resting-writes.ts): a bulk write's statements after the first each wait
// as long as the one before took, the waits of one bulk write add up to at most the cap, none
// reaches past its end time for rests, and each answers what its write did.
import { restBetweenWrites } from "../../src/db/resting-writes.ts";

/** A clock that only the writes move: each write takes the time it is given. */
function scriptedWrites(durations: number[]) {
  let clock = 0;
  const log: string[] = [];
  const waits: number[] = [];
  const options = {
    now: () => clock,
    wait: async (ms: number) => {
      waits.push(ms);
      log.push(`rest ${ms}`);
      clock += ms;
    },
  };
  const write = async (item: number) => {
    log.push(`write ${item}`);
    clock += durations[item]!;
  };
  return { write, options, log, waits };
}

it("rests before each statement after the first, as long as the one before took", async () => {
  const { write, options, log } = scriptedWrites([90, 110, 80, 100]);
  const paced = restBetweenWrites(write, { ...options, maxRestMs: 10_000 });
  for (const item of [0, 1, 2, 3]) await paced(item);
  // As long as the one before by default, and nothing after the last: the transaction commits at once.
  expect(log).toEqual(["write 0", "rest 90", "write 1", "rest 110", "write 2", "rest 80", "write 3"]);
});

it("rests 500 ms at most in all by default, however long the statements take", async () => {
  const { write, options, waits } = scriptedWrites([400, 400, 400, 400, 400]);
  const paced = restBetweenWrites(write, options);
  for (const item of [0, 1, 2, 3, 4]) await paced(item);
  expect(waits).toEqual([400, 100]);
});

it("rests a given share of the statement before", async () => {
  const { write, options, waits } = scriptedWrites([100, 60, 0]);
  const paced = restBetweenWrites(write, { ...options, ratio: 0.5 });
  for (const item of [0, 1, 2]) await paced(item);
  expect(waits).toEqual([50, 30]);
});

it("answers what each write did", async () => {
  const paced = restBetweenWrites(async (item: number) => ({ written: item * 2 }), { wait: async () => {} });
  expect(await paced(1)).toEqual({ written: 2 });
  expect(await paced(4)).toEqual({ written: 8 });
});

it("throws a failed write's error", async () => {
  const paced = restBetweenWrites(async () => {
    throw new Error("write failed");
  });
  await expect(paced(0)).rejects.toThrow("write failed");
});

it("waits on real timers by default", async () => {
  const paced = restBetweenWrites(async () => {
    await new Promise((r) => setTimeout(r, 30));
  });
  await paced(0);
  const second = performance.now();
  await paced(1);
  // It rested as long as the first write took (30 ms or more), then wrote for 30 ms.
  expect(performance.now() - second).toBeGreaterThanOrEqual(55);
});

it("takes no rest past its end time, and shortens the one that would reach past it", async () => {
  const { write, options, log } = scriptedWrites([100, 100, 100, 100]);
  // Written at 0–100, rest 100, written at 200–300; the next rest would end at 400, past 350.
  const paced = restBetweenWrites(write, { ...options, restUntil: 350 });
  for (const item of [0, 1, 2, 3]) await paced(item);
  expect(log).toEqual(["write 0", "rest 100", "write 1", "rest 50", "write 2", "write 3"]);
});
