// BulkTurns (src/db/bulk-turns.ts): bulk work of one process runs one at a time, across its
// threads; a turn is given back when its work fails, and waited for no longer than asked.
import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { Worker } from "node:worker_threads";
import { BulkTurns } from "../../src/db/bulk-turns.ts";

/** A worker thread holding `turns` (test/helpers/turn-holder.ts) until told to release them. */
async function holderThread(turns: BulkTurns) {
  const module = new URL("../helpers/turn-holder.ts", import.meta.url).href;
  // Worker threads do not inherit the test's TypeScript loader: this one registers tsx first.
  const worker = new Worker(
    `import("tsx/esm/api").then(({ register }) => { register(); return import(${JSON.stringify(module)}); })`,
    { eval: true, workerData: turns.buffer },
  );
  const [first] = await once(worker, "message");
  expect(first).toBe("holding");
  return {
    /** Once it has said so, the turn is free: the thread's own end is not waited for (stop() ends it). */
    async release() {
      const released = once(worker, "message");
      worker.postMessage("release");
      expect((await released)[0]).toBe("released");
    },
    stop: () => worker.terminate(),
  };
}

it("runs one thread's work only once another thread's turn is over, and answers what it answered", async () => {
  const turns = new BulkTurns(undefined, { maxWaitMs: 60_000 });
  const holder = await holderThread(turns);
  try {
    let started = false;
    const taken = turns.take(async () => {
      started = true;
      return "answer";
    });
    await sleep(200);
    expect(started).toBe(false);
    await holder.release();
    await expect(taken).resolves.toBe("answer");
    expect(started).toBe(true);
  } finally {
    await holder.stop();
  }
});

it("runs the work of one thread one at a time, in turn", async () => {
  const turns = new BulkTurns(undefined, { maxWaitMs: 60_000 });
  const log: string[] = [];
  const work = (name: string) => async () => {
    log.push(`${name} starts`);
    await sleep(20);
    log.push(`${name} ends`);
  };
  await Promise.all([turns.take(work("a")), turns.take(work("b")), turns.take(work("c"))]);
  expect(log).toEqual(["a starts", "a ends", "b starts", "b ends", "c starts", "c ends"]);
});

it("gives the turn back when the work fails", async () => {
  const turns = new BulkTurns(undefined, { maxWaitMs: 60_000 });
  await expect(turns.take(async () => Promise.reject(new Error("failed")))).rejects.toThrow("failed");
  // The turn is free: taken at once, not after the wait's end.
  await expect(turns.take(() => "next")).resolves.toBe("next");
});

it("runs the work beside the holder's once it has waited as long as asked", async () => {
  const turns = new BulkTurns(undefined, { maxWaitMs: 100 });
  const holder = await holderThread(turns);
  try {
    const waited = performance.now();
    await expect(turns.take(() => "anyway")).resolves.toBe("anyway");
    expect(performance.now() - waited).toBeGreaterThanOrEqual(99);
  } finally {
    await holder.release();
    await holder.stop();
  }
  // The holder's release left the turn free.
  await expect(new BulkTurns(turns.buffer, { maxWaitMs: 60_000 }).take(() => "free")).resolves.toBe("free");
});
