// One GraphQL execution per event for every subscriber of the same subscription: subscribers
// sending the same document with the same variables under the same scopes would get the same
// answers, so the first one's subscription runs once and its results fan out to all of them
// (1,000 dashboards on `events` cost one execution per event, not 1,000). The scopes are part of
// the key because they decide which events a subscription may receive; each socket still ends
// its own subscription (token expiry, stalled client, complete) without touching the others.
import type { Plugin } from "@envelop/core";
import type { DocumentNode, ExecutionResult } from "graphql";
import type { GraphQLContext } from "./context.ts";

/** Results waiting for one slow subscriber beyond this end its subscription with an error. */
export const MAX_QUEUED_RESULTS = 1000;

type Result = ExecutionResult;
type SubscribeResult = AsyncIterableIterator<Result> | Result;

/** One running subscription and the subscribers it feeds; closed for good once none is left. */
class Hub {
  private readonly subscribers = new Set<Subscriber>();
  closed = false;

  constructor(
    private readonly source: AsyncIterableIterator<Result>,
    private readonly onClose: () => void,
  ) {
    void this.pump();
  }

  join(): Subscriber {
    const subscriber = new Subscriber((s) => this.leave(s));
    if (this.closed) subscriber.end(); // its source has ended: nothing more will come
    else this.subscribers.add(subscriber);
    return subscriber;
  }

  private leave(subscriber: Subscriber): void {
    if (!this.subscribers.delete(subscriber) || this.subscribers.size > 0) return;
    this.close();
    void this.source.return?.();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
  }

  private async pump(): Promise<void> {
    try {
      for await (const result of this.source) for (const s of this.subscribers) s.push(result);
      for (const s of this.subscribers) s.end();
    } catch (err) {
      for (const s of this.subscribers) s.end(err);
    }
    this.close();
  }
}

/** One subscriber's view of a hub: an async iterator over a bounded queue. */
class Subscriber implements AsyncIterableIterator<Result> {
  private readonly queue: Result[] = [];
  private waiting: ((step: IteratorResult<Result>) => void) | undefined;
  private failWaiting: ((err: unknown) => void) | undefined;
  private done = false;
  private error: unknown;

  constructor(private readonly leave: (s: Subscriber) => void) {}

  push(result: Result): void {
    if (this.done) return;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = this.failWaiting = undefined;
      resolve({ value: result, done: false });
    } else if (this.queue.length < MAX_QUEUED_RESULTS) {
      this.queue.push(result);
    } else {
      // What it has not taken is dropped: the error is the next thing it reads.
      this.queue.length = 0;
      this.end(new Error(`Client too slow: over ${MAX_QUEUED_RESULTS} results unsent`));
      this.leave(this);
    }
  }

  end(err?: unknown): void {
    if (this.done) return;
    this.done = true;
    this.error = err;
    const [resolve, reject] = [this.waiting, this.failWaiting];
    this.waiting = this.failWaiting = undefined;
    if (err !== undefined && reject) reject(err);
    else resolve?.({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<Result>> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve({ value: queued, done: false });
    if (this.done) return this.error === undefined ? Promise.resolve({ value: undefined, done: true }) : Promise.reject(this.takeError());
    return new Promise((resolve, reject) => {
      this.waiting = resolve;
      this.failWaiting = reject;
    });
  }

  return(): Promise<IteratorResult<Result>> {
    this.queue.length = 0;
    this.end();
    this.leave(this);
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  private takeError(): unknown {
    const err = this.error;
    this.error = undefined; // reported once; then the iterator is simply done
    return err;
  }
}

const isAsyncIterable = (r: SubscribeResult): r is AsyncIterableIterator<Result> => Symbol.asyncIterator in r;

export function sharedSubscriptions(): Plugin<GraphQLContext> {
  const hubs = new Map<string, Promise<Hub | Result>>();
  // Yoga's parser cache hands the same DocumentNode for the same text: it names the document.
  const documentIds = new WeakMap<DocumentNode, number>();
  let nextDocumentId = 0;

  const keyOf = (document: DocumentNode, operationName: string | null | undefined, variables: unknown, context: GraphQLContext) => {
    let id = documentIds.get(document);
    if (id === undefined) documentIds.set(document, (id = nextDocumentId++));
    const scopes = [...(context.actor?.scopes ?? [])].sort().join(" ");
    return JSON.stringify([id, operationName ?? null, variables ?? null, scopes]);
  };

  return {
    onSubscribe({ args, subscribeFn, setSubscribeFn }) {
      const key = keyOf(args.document, args.operationName, args.variableValues, args.contextValue);
      const start = (): Promise<Hub | Result> => {
        const starting: Promise<Hub | Result> = Promise.resolve(subscribeFn(args) as SubscribeResult | Promise<SubscribeResult>).then(
          (result) => (isAsyncIterable(result) ? new Hub(result, forget) : result),
        );
        // Only a running hub is kept for the next caller: not what was refused or failed to start.
        const forget = () => hubs.get(key) === starting && hubs.delete(key);
        void starting.then((h) => h instanceof Hub || forget(), forget);
        hubs.set(key, starting);
        return starting;
      };
      setSubscribeFn(async () => {
        let started = await (hubs.get(key) ?? start());
        // A hub whose last subscriber left while this one waited is gone: start anew.
        if (started instanceof Hub && started.closed) started = await start();
        return started instanceof Hub ? started.join() : started;
      });
    },
  };
}
