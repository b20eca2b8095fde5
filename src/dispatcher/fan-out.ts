// Outbox → deliveries: each committed event becomes one pending delivery per subscription that is
// listening for its type and not disabled. Events are locked with SKIP LOCKED and marked in the same
// transaction, so concurrent dispatchers split the outbox and an event is fanned out exactly once.
import type { Db } from "../db/client.ts";
import { toEventEnvelope, type EventEnvelope, type EventRow } from "../events/catalog.ts";
import { newId } from "../ids.ts";

/** Fans out up to `batchSize` events; returns the events fanned out, in the order they happened. */
export async function fanOutEvents(db: Db, batchSize: number): Promise<EventEnvelope[]> {
  return db.$transaction(async (tx) => {
    const events = await tx.$queryRaw<EventRow[]>`
      SELECT id, type, data, occurred_at FROM events
       WHERE fanned_out_at IS NULL
       ORDER BY occurred_at, id
       LIMIT ${batchSize}
         FOR UPDATE SKIP LOCKED`;
    if (events.length === 0) return [];

    const types = [...new Set(events.map((e) => e.type))];
    const webhooks = await tx.webhook.findMany({
      where: { status: { in: ["active", "error"] }, events: { hasSome: types } },
      select: { id: true, events: true },
    });
    const now = new Date();
    const deliveries = events.flatMap((event) =>
      webhooks
        .filter((w) => w.events.includes(event.type))
        .map((w) => ({ id: newId(), webhookId: w.id, eventId: event.id, nextAttemptAt: now, createdAt: now, updatedAt: now })),
    );
    if (deliveries.length) await tx.webhookDelivery.createMany({ data: deliveries });
    await tx.event.updateMany({ where: { id: { in: events.map((e) => e.id) } }, data: { fannedOutAt: now } });
    return events.map(toEventEnvelope);
  });
}
