// What every resolver receives, over HTTP and WebSocket alike.
import type { Actor } from "../auth/scopes.ts";
import type { ServiceContext } from "../domain/context.ts";
import type { EventBus } from "../events/pubsub.ts";
import type { ReplayRest } from "../events/replay-pacing.ts";
import type { BatcherRegistry } from "./batch.ts";
import type { PerApplicationBatch } from "./per-application-batch.ts";

/**
 * How a subscription field streams events, set per execution by sharedSubscriptions(): live from now,
 * or a replay of the log after a cursor until it has caught up.
 */
export interface EventStreamMode {
  /** Replay the events after this cursor; live events from now when absent. */
  after?: string;
  /** Replay only: asked each time the replay reaches the end of the log (`head`); true ends it. */
  caughtUp?: (head: number) => boolean;
  /** Positions of the events handed to GraphQL and not yet seen as results, oldest first. */
  readonly handed: number[];
}

export interface GraphQLContext {
  /** The same context REST handlers pass to the domain services. */
  service: ServiceContext;
  actor: Actor | undefined;
  events: EventBus;
  /** How replays let the event loop turn: live subscribers first (replay-pacing.ts). */
  replayRest: ReplayRest;
  /** Per-request batchers for fields under lists (no N+1). */
  batch: BatcherRegistry;
  /** Reads under a list of applications: one statement for all of them. */
  perApplication: PerApplicationBatch;
  /** SSE: the Last-Event-ID header a reconnecting client sends (the cursor to resume after). */
  lastEventId?: string;
  /** Subscriptions only (see EventStreamMode). */
  eventStream?: EventStreamMode;
}
