// Builds the exact bytes and headers of one delivery attempt (docs/spec/CONTRACT.md §7). Pure: no clock, no I/O.
import { createHmac } from "node:crypto";
import canonicalize from "canonicalize";

export const WEBHOOK_USER_AGENT = "appsec-service-webhooks/1.0";

export interface DeliveryAttemptInput {
  secret: string;
  /** The delivery id: the same on every retry of one delivery. */
  deliveryId: string;
  eventId: string;
  eventType: string;
  /** When the event happened (ISO 8601). */
  timestamp: string;
  data: object;
  /** When this attempt is made: fresh on every retry, and covered by the Standard Webhooks signature. */
  attemptedAt: Date;
}

export interface DeliveryRequest {
  /** The raw body: send exactly these characters (UTF-8), since the signatures cover them. */
  body: string;
  headers: Record<string, string>;
}

// A string key is used as its UTF-8 bytes, which is what the contract specifies for every signature.
const hmacSha256 = (secret: string, message: string): Buffer =>
  createHmac("sha256", secret).update(message, "utf8").digest();

export const unixSeconds = (date: Date): number => Math.floor(date.getTime() / 1000);

/** The body's `signature` member: hex HMAC over the RFC 8785 canonical JSON of the body without it. */
export function bodySignature(secret: string, unsignedBody: Record<string, unknown>): string {
  const canonical = canonicalize(unsignedBody);
  if (canonical === undefined) throw new TypeError("The webhook body cannot be canonicalized");
  return hmacSha256(secret, canonical).toString("hex");
}

/** `X-Webhook-Signature`: the authoritative signature, over the raw body bytes. */
export const rawBodySignature = (secret: string, rawBody: string): string =>
  `sha256=${hmacSha256(secret, rawBody).toString("hex")}`;

/** `webhook-signature` (Standard Webhooks v1): binds the delivery id and attempt time to the body. */
export const standardWebhooksSignature = (
  secret: string,
  deliveryId: string,
  timestampSeconds: number,
  rawBody: string,
): string => `v1,${hmacSha256(secret, `${deliveryId}.${timestampSeconds}.${rawBody}`).toString("base64")}`;

export function buildDeliveryRequest(input: DeliveryAttemptInput): DeliveryRequest {
  const { secret, deliveryId, eventId, eventType, timestamp, data, attemptedAt } = input;
  const signature = bodySignature(secret, { eventId, eventType, timestamp, data });
  const body = JSON.stringify({ eventId, eventType, timestamp, signature, data });
  const attemptSeconds = unixSeconds(attemptedAt);
  return {
    body,
    headers: {
      "Content-Type": "application/json",
      "User-Agent": WEBHOOK_USER_AGENT,
      "X-Webhook-Id": deliveryId,
      "X-Webhook-Event": eventType,
      "X-Webhook-Timestamp": String(attemptSeconds),
      "X-Webhook-Signature": rawBodySignature(secret, body),
      "webhook-id": deliveryId,
      "webhook-timestamp": String(attemptSeconds),
      "webhook-signature": standardWebhooksSignature(secret, deliveryId, attemptSeconds, body),
    },
  };
}
