// The live feed's tail of the event log: whatever its sources bring (in order, repeated, with gaps,
// or only news that the log grew), subscribers get every event once, in log order; what was not
// brought is read from the log.
import type { LoggedEvent } from "../../src/events/event-log.ts";
import { createEventBus, type LogReader, type SourceHooks } from "../../src/events/pubsub.ts";
import { createLogger } from "../../src/log.ts";

const event = (position: number): LoggedEvent => ({
  eventId: `e${position}`,
  eventType: "scan.started",
  timestamp: new Date(0).toISOString(),
  data: {} as LoggedEvent["data"],
  position,
  applicationId: null,
  audience: { teams: null, teamsAll: false },
});

/** A log of `length` events from position 1, whose reads the test can count. */
function log(length: number): LogReader & { reads: number; length: number } {
  const reader = {
    reads: 0,
    length,
    head: async () => reader.length,
    async after(position: number) {
      reader.reads++;
      const events = Array.from({ length: Math.max(0, Math.min(reader.length - position, 3)) }, (_, i) =>
        event(position + i + 1),
      );
      const readThrough = events.at(-1)?.position ?? Math.max(position, reader.length);
      return { events, readThrough, atHead: readThrough >= reader.length };
    },
  };
  return reader;
}

async function setUp(initial: number) {
  const reader = log(initial);
  let hooks!: SourceHooks;
  const bus = createEventBus({
    source: { start: async (h) => void (hooks = h), stop: async () => {} },
    log: reader,
    logger: createLogger("silent"),
  });
  const iterator = await bus.subscribe();
  const seen: number[] = [];
  void (async () => {
    for await (const e of iterator) seen.push(e.position);
  })();
  const settle = () => new Promise((r) => setTimeout(r, 10));
  await settle();
  return { bus, reader, hooks: () => hooks, seen, settle };
}

it("starts at the head, delivers offered events in order, once, without reading the log", async () => {
  const { bus, reader, hooks, seen, settle } = await setUp(5);
  const readsAtStart = reader.reads;
  reader.length = 8;
  hooks().offer([event(6), event(7)]);
  hooks().offer([event(6), event(7), event(8)]); // repeated: a second instance's publication
  await settle();
  expect(seen).toEqual([6, 7, 8]);
  expect(reader.reads).toBe(readsAtStart);
  expect(bus.position()).toBe(8);
  await bus.close();
});

it("reads what an offer skipped, and what a notification announced, from the log", async () => {
  const { bus, reader, hooks, seen, settle } = await setUp(0);
  reader.length = 10;
  hooks().offer([event(9), event(10)]); // 1 to 8 went elsewhere (Redis dropped them)
  await settle();
  expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  reader.length = 12;
  hooks().grew(12);
  hooks().grew(12);
  await settle();
  hooks().grew(12); // already delivered: no read
  const reads = reader.reads;
  await settle();
  expect(reader.reads).toBe(reads);
  expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  await bus.close();
});

it("delivers offered events while a read of the log is in flight, and not again when the read brings them", async () => {
  const { bus, reader, hooks, seen, settle } = await setUp(5);
  // The fan-out's NOTIFY starts a read before its own events are offered: the read is held open.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const read = reader.after.bind(reader);
  reader.after = async (position) => {
    await held;
    return read(position);
  };
  reader.length = 7;
  hooks().grew(7);
  await settle();
  const readsInFlight = reader.reads;
  hooks().offer([event(6), event(7)]);
  await settle();
  expect(seen).toEqual([6, 7]); // not waiting for the read
  reader.length = 8; // the read, let go, brings 6 and 7 again and 8, committed meanwhile
  release();
  await settle();
  expect(seen).toEqual([6, 7, 8]);
  expect(reader.reads).toBe(readsInFlight + 1);
  await bus.close();
});
