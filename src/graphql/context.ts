// What every resolver receives, over HTTP and WebSocket alike.
import type { Actor } from "../auth/scopes.ts";
import type { ServiceContext } from "../domain/context.ts";
import type { EventBus } from "../events/pubsub.ts";
import type { BatcherRegistry } from "./batch.ts";
import type { PerApplicationBatch } from "./per-application-batch.ts";

export interface GraphQLContext {
  /** The same context REST handlers pass to the domain services. */
  service: ServiceContext;
  actor: Actor | undefined;
  events: EventBus;
  /** Per-request batchers for fields under lists (no N+1). */
  batch: BatcherRegistry;
  /** Reads under a list of applications: one statement for all of them. */
  perApplication: PerApplicationBatch;
}
