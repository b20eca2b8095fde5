// Verifies a webhook delivery from appsec-service. Published as `appsec-service/webhook-verify`;
// it depends only on Node and the `canonicalize` package, so a receiver may also copy this file.
//
// Receiver recipe (Node; read the body as raw bytes, before any JSON parsing):
//
//   import { verifyWebhookDelivery } from "appsec-service/webhook-verify";
//   const event = verifyWebhookDelivery({ rawBody, secret, headers: req.headers });
//   // throws WebhookVerificationError, else: dedupe by event.eventId, then act on event.data
//
// With any Standard Webhooks library instead: the key is the secret's UTF-8 bytes, not a base64
// `whsec_` secret. With the `standardwebhooks` npm package, either of:
//
//   new Webhook(Buffer.from(secret, "utf8"), { format: "raw" }).verify(rawBody, req.headers);
//   new Webhook(Buffer.from(secret, "utf8").toString("base64")).verify(rawBody, req.headers);
//
// Do not pass the secret *string* with `{ format: "raw" }`: that package turns each UTF-16 code
// unit into one byte, which differs from UTF-8 as soon as the secret has a non-ASCII character.
//
// What is checked, and why:
// - `X-Webhook-Signature: sha256=<hex>` is HMAC-SHA256(secret, raw body bytes): the body is intact.
// - `webhook-signature: v1,<base64>` is HMAC-SHA256(secret, "<webhook-id>.<webhook-timestamp>.<raw
//   body>"). The X- signature does not cover the attempt time, so this one is what stops an
//   attacker from replaying a captured delivery under a fresh timestamp; it is required too.
// - The attempt timestamp (`X-Webhook-Timestamp`, equal to `webhook-timestamp`) is within
//   `toleranceSeconds` of the receiver's clock.
// - The body's `signature` member is hex HMAC-SHA256(secret, RFC 8785 canonical JSON of the body
//   without that member), which stays valid if a proxy re-serializes the JSON.
import { createHmac, timingSafeEqual } from "node:crypto";
import canonicalize from "canonicalize";

export type WebhookVerificationFailure =
  | "missing_header"
  | "malformed_header"
  | "timestamp_out_of_tolerance"
  | "signature_mismatch"
  | "invalid_body"
  | "body_signature_mismatch";

export class WebhookVerificationError extends Error {
  constructor(
    readonly reason: WebhookVerificationFailure,
    message: string,
  ) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}

export interface VerifiedWebhookEvent {
  eventId: string;
  eventType: string;
  /** When the event happened (ISO 8601); not the attempt time. */
  timestamp: string;
  signature: string;
  data: Record<string, unknown>;
}

export interface VerifyWebhookDeliveryInput {
  rawBody: string | Uint8Array;
  secret: string;
  /** Request headers; names are matched case-insensitively (Node's `req.headers` fits as is). */
  headers: Record<string, string | string[] | undefined>;
  toleranceSeconds?: number;
  now?: Date;
}

const HEX_SHA256 = /^[0-9a-f]{64}$/;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const hmacSha256 = (secret: string, message: Uint8Array): Buffer =>
  createHmac("sha256", secret).update(message).digest();

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && timingSafeEqual(a, b);

function header(headers: VerifyWebhookDeliveryInput["headers"], name: string): string {
  const values = Object.entries(headers)
    .filter(([key, value]) => key.toLowerCase() === name && value !== undefined)
    .flatMap(([, value]) => value ?? []);
  if (values.length === 0) throw new WebhookVerificationError("missing_header", `Missing the ${name} header`);
  if (values.length > 1)
    throw new WebhookVerificationError("malformed_header", `The ${name} header appears more than once`);
  return values[0] as string;
}

function attemptTimestamp(headers: VerifyWebhookDeliveryInput["headers"]): number {
  const value = header(headers, "x-webhook-timestamp");
  if (!/^\d{1,12}$/.test(value)) {
    throw new WebhookVerificationError("malformed_header", "X-Webhook-Timestamp must be Unix seconds");
  }
  if (header(headers, "webhook-timestamp") !== value) {
    throw new WebhookVerificationError("malformed_header", "webhook-timestamp differs from X-Webhook-Timestamp");
  }
  return Number(value);
}

function checkRawBodySignature(headers: VerifyWebhookDeliveryInput["headers"], secret: string, body: Buffer): void {
  const match = /^sha256=([0-9a-f]{64})$/i.exec(header(headers, "x-webhook-signature"));
  if (!match?.[1]) {
    throw new WebhookVerificationError("malformed_header", "X-Webhook-Signature must be sha256=<64 hex digits>");
  }
  if (!sameBytes(Buffer.from(match[1], "hex"), hmacSha256(secret, body))) {
    throw new WebhookVerificationError("signature_mismatch", "X-Webhook-Signature does not match the body");
  }
}

function checkStandardWebhooksSignature(
  headers: VerifyWebhookDeliveryInput["headers"],
  secret: string,
  body: Buffer,
  timestamp: number,
): void {
  const id = header(headers, "webhook-id");
  const expected = hmacSha256(secret, Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body]));
  // Several space-separated signatures may be sent (for example during a secret rotation).
  const candidates = header(headers, "webhook-signature")
    .split(" ")
    .filter((entry) => entry.startsWith("v1,"))
    .map((entry) => Buffer.from(entry.slice(3), "base64"));
  if (candidates.length === 0) {
    throw new WebhookVerificationError("malformed_header", "webhook-signature has no v1,<base64> signature");
  }
  if (!candidates.some((candidate) => sameBytes(candidate, expected))) {
    throw new WebhookVerificationError("signature_mismatch", "webhook-signature does not match the delivery");
  }
}

function parseEvent(body: Buffer): VerifiedWebhookEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch {
    throw new WebhookVerificationError("invalid_body", "The body is not JSON");
  }
  if (
    !isObject(parsed) ||
    typeof parsed.eventId !== "string" ||
    typeof parsed.eventType !== "string" ||
    typeof parsed.timestamp !== "string" ||
    typeof parsed.signature !== "string" ||
    !isObject(parsed.data)
  ) {
    throw new WebhookVerificationError("invalid_body", "The body is not a webhook event");
  }
  return parsed as unknown as VerifiedWebhookEvent;
}

function checkBodySignature(event: VerifiedWebhookEvent, secret: string): void {
  const { signature, ...unsigned } = event;
  if (!HEX_SHA256.test(signature)) {
    throw new WebhookVerificationError("invalid_body", "The body's signature must be 64 lowercase hex digits");
  }
  const expected = hmacSha256(secret, Buffer.from(canonicalize(unsigned) ?? "", "utf8"));
  if (!sameBytes(Buffer.from(signature, "hex"), expected)) {
    throw new WebhookVerificationError("body_signature_mismatch", "The body's signature does not match its content");
  }
}

/** Returns the verified event, or throws a WebhookVerificationError saying what failed. */
export function verifyWebhookDelivery({
  rawBody,
  secret,
  headers,
  toleranceSeconds = 300,
  now = new Date(),
}: VerifyWebhookDeliveryInput): VerifiedWebhookEvent {
  const body = typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : Buffer.from(rawBody);
  const timestamp = attemptTimestamp(headers);
  if (Math.abs(now.getTime() / 1000 - timestamp) > toleranceSeconds) {
    throw new WebhookVerificationError(
      "timestamp_out_of_tolerance",
      `The delivery timestamp is more than ${toleranceSeconds} s from this clock`,
    );
  }
  checkRawBodySignature(headers, secret, body);
  checkStandardWebhooksSignature(headers, secret, body, timestamp);
  const event = parseEvent(body);
  checkBodySignature(event, secret);
  return event;
}
