// The audit trail (docs/spec/CONTRACT.md §17): every change of configuration is an event, written in
// the transaction of the change (the outbox), carrying the resource as REST returns it afterwards,
// its actor and, for an update, the fields whose value changed. An update that changes nothing is no
// event.
import type { Actor } from "../../auth/scopes.ts";
import type { SqlRunner } from "../../db/run-sql.ts";
import type { EventType } from "../../events/catalog.ts";
import { recordEvent } from "../../events/outbox.ts";
import type { EventAudience } from "../access/viewer.ts";

type Resource = "application" | "policy" | "webhook";
type View = { id: string; name: string } & object;

interface Target {
  audience: EventAudience;
  /** An application's own events are also its events (GET /events?applicationId=). */
  applicationId?: string;
}

/** The names of the top-level fields whose value differs, updatedAt aside. */
export function changedFields(before: object, after: object): string[] {
  const was = before as Record<string, unknown>;
  const is = after as Record<string, unknown>;
  return Object.keys(is).filter((key) => key !== "updatedAt" && JSON.stringify(was[key]) !== JSON.stringify(is[key]));
}

const actorOf = (actor: Actor) => ({ sub: actor.sub });

export async function recordCreated(tx: SqlRunner, resource: Resource, view: View, actor: Actor, target: Target) {
  await recordEvent(tx, `${resource}.created` as EventType, { ...view, actor: actorOf(actor) } as never, target);
}

/**
 * Records the update when it changed something; the fields it changed. `alsoChanged`: fields the
 * view does not show the value of (a webhook's secret).
 */
export async function recordUpdated(
  tx: SqlRunner,
  resource: Resource,
  before: View,
  after: View,
  actor: Actor,
  target: Target,
  alsoChanged: readonly string[] = [],
): Promise<string[]> {
  const changed = [...changedFields(before, after), ...alsoChanged];
  if (changed.length > 0) {
    const data = { ...after, actor: actorOf(actor), changed };
    await recordEvent(tx, `${resource}.updated` as EventType, data as never, target);
  }
  return changed;
}

export async function recordDeleted(tx: SqlRunner, resource: Resource, view: View, actor: Actor, target: Target) {
  const data = { id: view.id, name: view.name, actor: actorOf(actor) };
  await recordEvent(tx, `${resource}.deleted` as EventType, data as never, target);
}
