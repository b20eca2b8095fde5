// The fan-out of one subscription's results to every subscriber that shares it: who shares, what a
// slow subscriber gets, and when the shared subscription ends. Its sources are plain iterators here;
// test/integration/graphql-subscriptions.test.ts runs it behind graphql-ws on real events.
import { jest } from "@jest/globals";
import { parse, type ExecutionResult } from "graphql";
import { MAX_QUEUED_RESULTS, sharedSubscriptions } from "../../src/graphql/shared-subscriptions.ts";

/** A subscription's results, pushed by the test; remembers whether it was ended. */
function source() {
  const queue: ExecutionResult[] = [];
  let waiting: ((step: IteratorResult<ExecutionResult>) => void) | undefined;
  const iterator = {
    returned: false,
    push(result: ExecutionResult) {
      if (waiting) waiting({ value: result, done: false });
      else queue.push(result);
      waiting = undefined;
    },
    next: () =>
      queue.length
        ? Promise.resolve({ value: queue.shift()!, done: false })
        : new Promise<IteratorResult<ExecutionResult>>((r) => (waiting = r)),
    return: () => {
      iterator.returned = true;
      waiting?.({ value: undefined, done: true });
      return Promise.resolve({ value: undefined, done: true as const });
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}

const document = parse("subscription { events { eventId } }");
type Subscribed = AsyncIterableIterator<ExecutionResult>;

function setUp() {
  const plugin = sharedSubscriptions();
  const sources: ReturnType<typeof source>[] = [];
  const subscribeFn = jest.fn(() => {
    const s = source();
    sources.push(s);
    return s;
  });
  async function subscribe(scopes: string[], variableValues: Record<string, unknown> = {}): Promise<Subscribed> {
    let replaced: (() => Promise<unknown>) | undefined;
    const args = {
      document,
      variableValues,
      contextValue: { actor: { sub: "t", exp: 0, scopes: new Set(scopes), teams: null, orgWide: true } },
    };
    plugin.onSubscribe!({
      args,
      subscribeFn,
      setSubscribeFn: (fn: () => Promise<unknown>) => (replaced = fn),
    } as never);
    return (await replaced!()) as Subscribed;
  }
  return { subscribe, subscribeFn, sources };
}

const tick = () => new Promise((r) => setImmediate(r));
const result = (n: number): ExecutionResult => ({ data: { events: { eventId: String(n) } } });

describe("shared subscriptions", () => {
  it("run once for the same document, variables and scopes, and apart otherwise", async () => {
    const { subscribe, subscribeFn } = setUp();
    const [a, b] = await Promise.all([subscribe(["admin"]), subscribe(["admin"])]);
    expect(subscribeFn).toHaveBeenCalledTimes(1);
    await subscribe(["scans:read"]);
    await subscribe(["admin"], { applicationId: "x" });
    expect(subscribeFn).toHaveBeenCalledTimes(3);
    expect(a).not.toBe(b);
  });

  it("give every subscriber every result in order; the source ends with the last subscriber", async () => {
    const { subscribe, sources } = setUp();
    const [a, b] = [await subscribe(["admin"]), await subscribe(["admin"])];
    for (let n = 0; n < 3; n++) sources[0]!.push(result(n));
    await tick();
    for (const s of [a, b]) for (let n = 0; n < 3; n++) expect((await s.next()).value).toEqual(result(n));
    await a.return!();
    expect(sources[0]!.returned).toBe(false);
    sources[0]!.push(result(3));
    await tick();
    expect((await b.next()).value).toEqual(result(3));
    await b.return!();
    expect(sources[0]!.returned).toBe(true);
    // The next subscriber starts a new one.
    await subscribe(["admin"]);
    expect(sources).toHaveLength(2);
  });

  it(`end a subscriber that leaves more than ${MAX_QUEUED_RESULTS} results unread, and only that one`, async () => {
    const { subscribe, sources } = setUp();
    const [slow, fast] = [await subscribe(["admin"]), await subscribe(["admin"])];
    const read: ExecutionResult[] = [];
    const reading = (async () => {
      for await (const r of fast) if (read.push(r) === MAX_QUEUED_RESULTS + 10) return;
    })();
    for (let n = 0; n < MAX_QUEUED_RESULTS + 10; n++) {
      sources[0]!.push(result(n));
      await tick();
    }
    await reading;
    expect(read).toHaveLength(MAX_QUEUED_RESULTS + 10);
    await expect(slow.next()).rejects.toThrow(/too slow/);
    expect(await slow.next()).toEqual({ value: undefined, done: true });
    expect(sources[0]!.returned).toBe(true); // `fast` left by returning from its loop, `slow` by overflowing
  });
});
