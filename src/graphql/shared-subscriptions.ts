// One GraphQL execution per event for every subscriber of the same subscription: subscribers
// sending the same document with the same variables under the same scopes would get the same
// answers, so the first one's subscription runs once and its results fan out to all of them
// (1,000 dashboards on `events` cost one execution per event, not 1,000). The scopes and the teams
// (null for an org-wide caller) are part of the key because they decide which events a
// subscription may receive (docs/spec/CONTRACT.md §1, §17); each socket still ends
// its own subscription (token expiry, stalled client, complete) without touching the others.
//
// A subscriber that resumes (its field's `after`, or SSE's Last-Event-ID) shares too: `after` is not
// part of the key. It first gets a replay of the log after its cursor, executed for it alone, while
// it waits in the shared subscription dropping every result; when the replay has read the whole log
// up to position H and the live stream has not delivered past H, it takes the shared results after H
// from then on. Every result carries the position of the event it was made from (EVENT_POSITION),
// which is also what SSE sends as each event's id.
import { setImmediate } from "node:timers/promises";
import type { Plugin } from "@envelop/core";
import { getOperationAST, GraphQLError, Kind, type DocumentNode, type ExecutionResult } from "graphql";
import { isConnectionError } from "../db/database-health.ts";
import { viewerTeams } from "../domain/access/viewer.ts";
import type { EventStreamMode, GraphQLContext } from "./context.ts";
import { isUnexpected, maskError } from "./errors.ts";

/** Results waiting for one slow subscriber beyond this end its subscription with an error. */
export const MAX_QUEUED_RESULTS = 1000;

/** The log position of the event a result was made from; a symbol, so it never reaches the wire. */
export const EVENT_POSITION = Symbol("eventPosition");

type Result = ExecutionResult & { [EVENT_POSITION]?: number };
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

  /** A subscriber taking the results of events after position `after`. */
  join(after = -Infinity): Subscriber {
    const subscriber = new Subscriber((s) => this.leave(s), after);
    if (this.closed)
      subscriber.end(); // its source has ended: nothing more will come
    else this.subscribers.add(subscriber);
    return subscriber;
  }

  private leave(subscriber: Subscriber): void {
    if (!this.subscribers.delete(subscriber) || this.subscribers.size > 0) return;
    this.close();
    void this.source.return?.();
  }

  /** Hands `result` to the subscribers there are now, a batch at a time. */
  private async fanOut(result: Result): Promise<void> {
    const subscribers = [...this.subscribers];
    for (let i = 0; i < subscribers.length; i += FAN_OUT_BATCH) {
      if (i > 0) await setImmediate();
      for (const s of subscribers.slice(i, i + FAN_OUT_BATCH)) s.push(result);
    }
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
  }

  private async pump(): Promise<void> {
    try {
      for await (const result of this.source) await this.fanOut(result);
      for (const s of this.subscribers) s.end();
    } catch (err) {
      for (const s of this.subscribers) s.end(err);
    }
    this.close();
  }
}

/**
 * Subscribers a hub hands one result to before it lets the others run. The hubs of one event (one
 * per key: a team's subscribers have theirs) take turns by batches, so that no hub's subscribers
 * all wait for another's to be sent (bench/notes/2026-12-02-teams.md).
 */
const FAN_OUT_BATCH = 50;

/** One subscriber's view of a hub: an async iterator over a bounded queue. */
class Subscriber implements AsyncIterableIterator<Result> {
  private readonly queue: Result[] = [];
  private waiting: ((step: IteratorResult<Result>) => void) | undefined;
  private failWaiting: ((err: unknown) => void) | undefined;
  private done = false;
  private error: unknown;

  constructor(
    private readonly leave: (s: Subscriber) => void,
    /** Results of events at or before this position are not for this subscriber (it has them). */
    private after: number,
  ) {}

  /** From now on, take the results of events after `position`. */
  takeAfter(position: number): void {
    this.after = position;
  }

  push(result: Result): void {
    if (this.done || (result[EVENT_POSITION] ?? Infinity) <= this.after) return;
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
    if (this.done)
      return this.error === undefined
        ? Promise.resolve({ value: undefined, done: true })
        : Promise.reject(this.takeError());
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

/**
 * A resuming subscriber: its replay's results, then its shared subscriber's. A replay that fails (the
 * cursor expired meanwhile, the database went away) ends with that error as a last result, with its
 * code, as a subscription refused at the start would.
 */
class Resumed implements AsyncIterableIterator<Result> {
  private replaying = true;

  constructor(
    private readonly replay: AsyncIterableIterator<Result>,
    private readonly live: Subscriber,
    private readonly context: GraphQLContext,
  ) {}

  async next(): Promise<IteratorResult<Result>> {
    if (this.replaying) {
      try {
        const step = await this.replay.next();
        if (!step.done) return step;
        this.replaying = false;
      } catch (err) {
        this.replaying = false;
        await this.live.return();
        return { value: { errors: [this.streamError(err)] }, done: false };
      }
    }
    return this.live.next();
  }

  async return(): Promise<IteratorResult<Result>> {
    this.replaying = false;
    await Promise.all([this.replay.return?.(), this.live.return()]);
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  private streamError(err: unknown): GraphQLError {
    if (isUnexpected(err) && !isConnectionError(err))
      this.context.service.log.error({ err }, "replaying events failed");
    const masked = maskError(err, "Unexpected error.") as GraphQLError;
    // An HTTP status means nothing inside a stream.
    const { http: _, ...extensions } = masked.extensions ?? {};
    return new GraphQLError(masked.message, { extensions });
  }
}

/** Records on each result the position of the event it was made from (one result per event, in order). */
function tagged(source: AsyncIterableIterator<Result>, mode: EventStreamMode): AsyncIterableIterator<Result> {
  return {
    async next() {
      const step = await source.next();
      if (!step.done) step.value[EVENT_POSITION] = mode.handed.shift();
      return step;
    },
    return: () => source.return?.() ?? Promise.resolve({ value: undefined, done: true }),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/**
 * The subscription field's `after` argument: its literal value, or the variable that carries it and
 * that variable's default (what the field gets when the variable is not sent).
 */
function afterArgument(
  document: DocumentNode,
  operationName: string | null | undefined,
): { variable?: string; byDefault?: string; value?: string } {
  const operation = getOperationAST(document, operationName);
  const field = operation?.selectionSet.selections[0];
  const after = field?.kind === Kind.FIELD ? field.arguments?.find((arg) => arg.name.value === "after") : undefined;
  if (after?.value.kind === Kind.VARIABLE) {
    const variable = after.value.name.value;
    const byDefault = operation?.variableDefinitions?.find((d) => d.variable.name.value === variable)?.defaultValue;
    return { variable, ...(byDefault?.kind === Kind.STRING && { byDefault: byDefault.value }) };
  }
  if (after?.value.kind === Kind.STRING) return { value: after.value.value };
  return {};
}

const isAsyncIterable = (r: SubscribeResult): r is AsyncIterableIterator<Result> => Symbol.asyncIterator in r;

export function sharedSubscriptions(): Plugin<GraphQLContext> {
  const hubs = new Map<string, Promise<Hub | Result>>();
  // Yoga's parser cache hands the same DocumentNode for the same text: it names the document.
  const documentIds = new WeakMap<DocumentNode, number>();
  let nextDocumentId = 0;

  const keyOf = (
    document: DocumentNode,
    operationName: string | null | undefined,
    variables: unknown,
    context: GraphQLContext,
  ) => {
    let id = documentIds.get(document);
    if (id === undefined) documentIds.set(document, (id = nextDocumentId++));
    const scopes = [...(context.actor?.scopes ?? [])].sort().join(" ");
    const teams = context.actor && viewerTeams(context.actor);
    return JSON.stringify([id, operationName ?? null, variables ?? null, scopes, teams && [...teams].sort()]);
  };

  return {
    onSubscribe({ args, subscribeFn, setSubscribeFn }) {
      const context = args.contextValue;
      const argument = afterArgument(args.document, args.operationName);
      const variables = { ...(args.variableValues as Record<string, unknown> | undefined) };
      const fromVariable =
        argument.variable === undefined
          ? undefined
          : Object.hasOwn(variables, argument.variable)
            ? variables[argument.variable] // null too: the field gets null, not the default
            : argument.byDefault;
      if (argument.variable !== undefined) delete variables[argument.variable];
      const after =
        argument.value ??
        (typeof fromVariable === "string" ? fromVariable : undefined) ??
        (context.lastEventId || undefined);
      const key = keyOf(args.document, args.operationName, variables, context);

      /** Executes with a mode of its own; its results carry their events' positions. */
      const execute = async (mode: EventStreamMode): Promise<SubscribeResult> => {
        const result = (await subscribeFn({
          ...args,
          contextValue: { ...context, eventStream: mode },
        })) as SubscribeResult;
        return isAsyncIterable(result) ? tagged(result, mode) : result;
      };
      const start = (): Promise<Hub | Result> => {
        const starting: Promise<Hub | Result> = execute({ handed: [] }).then((result) =>
          isAsyncIterable(result) ? new Hub(result, forget) : result,
        );
        // Only a running hub is kept for the next caller: not what was refused or failed to start.
        const forget = () => hubs.get(key) === starting && hubs.delete(key);
        void starting.then((h) => h instanceof Hub || forget(), forget);
        hubs.set(key, starting);
        return starting;
      };
      const hub = async (): Promise<Hub | Result> => {
        const started = await (hubs.get(key) ?? start());
        // A hub whose last subscriber left while this one waited is gone: start anew.
        return started instanceof Hub && started.closed ? start() : started;
      };

      setSubscribeFn(async () => {
        if (after === undefined) {
          const shared = await hub();
          return shared instanceof Hub ? shared.join() : shared;
        }
        let live: Subscriber | undefined;
        const replay = await execute({
          after,
          handed: [],
          caughtUp: (head) => {
            // The live stream has delivered nothing after `head` yet: all it delivers from now on is
            // after the replay, and none of it was missed.
            if (!live || context.events.position() > head) return false;
            live.takeAfter(head);
            return true;
          },
        });
        if (!isAsyncIterable(replay)) return replay;
        const shared = await hub();
        if (!(shared instanceof Hub)) {
          await replay.return?.();
          return shared;
        }
        live = shared.join(Infinity); // takes nothing until the replay has caught up
        return new Resumed(replay, live, context);
      });
    },
  };
}
