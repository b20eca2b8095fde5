// Event subscriptions: who may receive which event types, and which events a subscription keeps.
// Each type needs the read scope of what it carries (EVENT_READ_SCOPE), checked before the stream
// starts, whether it is live or replayed from the log.
import { requireActor, requireScope } from "../../auth/scopes.ts";
import { EVENT_READ_SCOPE, type EventType } from "../../events/catalog.ts";
import type { LoggedEvent } from "../../events/event-log.ts";
import { invalid } from "../../errors.ts";
import { eventVisibility, viewerTeams, type ViewerTeams } from "../access/viewer.ts";
import type { ServiceContext } from "../context.ts";
import { atLeast, type Severity } from "../validation.ts";

export interface EventSubscriptionFilter {
  types: readonly EventType[];
  /** Only events about this application. */
  applicationId?: string;
  /** Only events whose data carries a severity at or above this one. */
  minSeverity?: Severity;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Throws unless the caller may receive every one of `types`. */
export function authorizeEventTypes(ctx: ServiceContext, types: readonly EventType[]): void {
  for (const type of new Set(types)) requireScope(ctx.actor, EVENT_READ_SCOPE[type]);
}

/** Throws a 400 for an application id that is not even well-formed (it would match nothing). */
export function requireWellFormedApplicationId(applicationId: string | undefined): void {
  if (applicationId !== undefined && !UUID.test(applicationId)) {
    throw invalid("Invalid filter", [{ path: "applicationId", message: "Must be an application id" }]);
  }
}

/** The events a subscription with this filter receives, of those `viewer` sees (CONTRACT §17). */
export function eventPredicate(
  filter: EventSubscriptionFilter,
  viewer: ViewerTeams = null,
): (event: LoggedEvent) => boolean {
  const visible = eventVisibility(viewer);
  return (event) => {
    const data = event.data as { applicationId?: string; severity?: string };
    return (
      visible(event.audience) &&
      filter.types.includes(event.eventType) &&
      (filter.applicationId === undefined || (event.applicationId ?? data.applicationId) === filter.applicationId) &&
      (filter.minSeverity === undefined || (data.severity !== undefined && atLeast(data.severity, filter.minSeverity)))
    );
  };
}

/** Authorizes a subscription, then answers the predicate its stream is narrowed with: what the caller sees of it. */
export function openEventSubscription(
  ctx: ServiceContext,
  filter: EventSubscriptionFilter,
): (event: LoggedEvent) => boolean {
  authorizeEventTypes(ctx, filter.types);
  requireWellFormedApplicationId(filter.applicationId);
  return eventPredicate(filter, viewerTeams(requireActor(ctx.actor)));
}
