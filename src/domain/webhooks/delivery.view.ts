// A webhook delivery with its attempt log, as callers see it (docs/spec/CONTRACT.md §7).
import { z } from "zod";
import type { DeliveryAttempt, Event, WebhookDelivery } from "../../generated/prisma/client.ts";

export const deliveryAttemptViewSchema = z
  .object({
    attemptedAt: z.iso.datetime(),
    statusCode: z.number().int().nullable().describe("The receiver's HTTP status; null when it gave no answer"),
    durationMs: z.number().int(),
    error: z.string().nullable().describe("timeout, connection or forbidden_target, with details; null when answered"),
  })
  .meta({ id: "WebhookDeliveryAttempt" });

export const deliveryViewSchema = z
  .object({
    id: z.string().describe("The delivery id, sent as X-Webhook-Id on every attempt"),
    eventId: z.string(),
    eventType: z.string(),
    status: z.enum(["pending", "delivered", "dropped", "failed", "cancelled"]),
    createdAt: z.iso.datetime(),
    nextAttemptAt: z.iso.datetime().nullable(),
    waiting: z
      .enum(["endpoint_recovery"])
      .nullable()
      .describe(
        "endpoint_recovery: not yet attempted, held back while the subscription's endpoint fails and its retries are pending",
      ),
    attempts: z.array(deliveryAttemptViewSchema).describe("Oldest first"),
  })
  .meta({ id: "WebhookDelivery" });

export type DeliveryView = z.infer<typeof deliveryViewSchema>;

export type DeliveryWithLog = WebhookDelivery & {
  event: Pick<Event, "type">;
  attempts: DeliveryAttempt[];
  /** Why a pending delivery is not being sent (deliveries.service.ts). */
  waiting?: "endpoint_recovery" | null;
};

export const toDeliveryView = (d: DeliveryWithLog): DeliveryView => ({
  id: d.id,
  eventId: d.eventId,
  eventType: d.event.type,
  status: d.status,
  createdAt: d.createdAt.toISOString(),
  nextAttemptAt: d.nextAttemptAt?.toISOString() ?? null,
  waiting: d.waiting ?? null,
  attempts: d.attempts.map((a) => ({
    attemptedAt: a.attemptedAt.toISOString(),
    statusCode: a.statusCode,
    durationMs: a.durationMs,
    error: a.error,
  })),
});
