// Wakes the webhook dispatchers when a delivery is queued outside the outbox fan-out (a redelivery).
// Like the outbox NOTIFY, it is transactional: dispatchers hear of it once the row is committed.
import type { Tx } from "../db/client.ts";

export const DELIVERIES_CHANNEL = "appsec_deliveries";

export async function notifyDeliveryQueued(tx: Tx, deliveryId: string): Promise<void> {
  await tx.$executeRaw`SELECT pg_notify(${DELIVERIES_CHANNEL}, ${deliveryId})`;
}
