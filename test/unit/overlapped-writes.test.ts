// writeOverlapped (src/db/overlapped-writes.ts): every item written in order, one at a time, the
// next item made while the previous is written, and nothing written after a failure.
import { writeOverlapped } from "../../src/db/overlapped-writes.ts";

/** A write that ends when told to, logging when it starts and ends. */
function controlledWrites(log: string[]) {
  const pending: { item: number; end: (fail?: boolean) => void }[] = [];
  const write = (item: number) =>
    new Promise<void>((resolve, reject) => {
      log.push(`write ${item}`);
      pending.push({ item, end: (fail) => (fail ? reject(new Error(`write ${item} failed`)) : resolve()) });
    }).finally(() => log.push(`written ${item}`));
  return { write, pending };
}

function* made(count: number, log: string[], failAt?: number) {
  for (let i = 1; i <= count; i++) {
    if (i === failAt) throw new Error(`making ${i} failed`);
    log.push(`made ${i}`);
    yield i;
  }
}

const settle = () => new Promise((r) => setImmediate(r));

it("makes the next item while the previous is written, and writes one at a time, in order", async () => {
  const log: string[] = [];
  const { write, pending } = controlledWrites(log);
  const done = writeOverlapped(made(3, log), write);
  await settle();
  expect(log).toEqual(["made 1", "write 1", "made 2"]);
  for (let i = 0; i < 3; i++) {
    pending[i]!.end();
    await settle();
  }
  await done;
  expect(log).toEqual([
    "made 1",
    "write 1",
    "made 2",
    "written 1",
    "write 2",
    "made 3",
    "written 2",
    "write 3",
    "written 3",
  ]);
});

it("throws the first failed write, and writes nothing after it", async () => {
  const log: string[] = [];
  const { write, pending } = controlledWrites(log);
  const done = writeOverlapped(made(3, log), write);
  await settle();
  pending[0]!.end(true);
  await expect(done).rejects.toThrow("write 1 failed");
  expect(log.filter((l) => l.startsWith("write "))).toEqual(["write 1"]);
});

it("throws a failure to make an item once the write in flight has been sent, and starts no other", async () => {
  const log: string[] = [];
  const { write, pending } = controlledWrites(log);
  const done = writeOverlapped(made(3, log, 2), write);
  await expect(done).rejects.toThrow("making 2 failed");
  // The write in flight fails too, later: that is not an unhandled rejection.
  pending[0]!.end(true);
  await settle();
  expect(log).toEqual(["made 1", "write 1", "written 1"]);
});

it("writes nothing for no items", async () => {
  const log: string[] = [];
  await writeOverlapped(made(0, log), controlledWrites(log).write);
  expect(log).toEqual([]);
});
