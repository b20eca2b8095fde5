// A webhook delivery with its attempt log, as callers see it (CONTRACT §7).
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
    attempts: z.array(deliveryAttemptViewSchema).describe("Oldest first"),
  })
  .meta({ id: "WebhookDelivery" });

export type DeliveryView = z.infer<typeof deliveryViewSchema>;

export type DeliveryWithLog = WebhookDelivery & { event: Pick<Event, "type">; attempts: DeliveryAttempt[] };

export const toDeliveryView = (d: DeliveryWithLog): DeliveryView => ({
  id: d.id,
  eventId: d.eventId,
  eventType: d.event.type,
  status: d.status,
  createdAt: d.createdAt.toISOString(),
  nextAttemptAt: d.nextAttemptAt?.toISOString() ?? null,
  attempts: d.attempts.map((a) => ({
    attemptedAt: a.attemptedAt.toISOString(),
    statusCode: a.statusCode,
    durationMs: a.durationMs,
    error: a.error,
  })),
});
