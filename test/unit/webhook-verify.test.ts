import {
  buildDeliveryRequest,
  rawBodySignature,
  standardWebhooksSignature,
  unixSeconds,
} from "../../src/dispatcher/signing.ts";
import {
  verifyWebhookDelivery,
  WebhookVerificationError,
  type VerifyWebhookDeliveryInput,
} from "../../src/webhooks/verify-delivery.ts";

const secret = "s3cret-for-tests";
const attemptedAt = new Date("2025-03-01T12:00:00Z");
const event = {
  eventId: "evt_1",
  eventType: "vulnerability.created",
  timestamp: "2025-03-01T11:59:58.000Z",
  data: {
    id: "v1",
    severity: "high",
    applicationId: "a1",
    title: "SQL injection",
    createdAt: "2025-03-01T11:59:58.000Z",
  },
};
const delivery = buildDeliveryRequest({ ...event, secret, deliveryId: "dlv_1", attemptedAt });

// As Node hands them to a receiver: names lowercased.
const lowercased = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));

const verify = (overrides: Partial<VerifyWebhookDeliveryInput> = {}) =>
  verifyWebhookDelivery({
    rawBody: delivery.body,
    secret,
    headers: lowercased(delivery.headers),
    now: attemptedAt,
    ...overrides,
  });

const failure = (overrides: Partial<VerifyWebhookDeliveryInput>) => {
  try {
    verify(overrides);
  } catch (err) {
    if (err instanceof WebhookVerificationError) return err.reason;
    throw err;
  }
  throw new Error("verification unexpectedly succeeded");
};

/** A delivery whose headers are correctly signed over an arbitrary raw body. */
const signedOver = (rawBody: string) => {
  const seconds = unixSeconds(attemptedAt);
  return {
    rawBody,
    headers: {
      "x-webhook-timestamp": String(seconds),
      "x-webhook-signature": rawBodySignature(secret, rawBody),
      "webhook-id": "dlv_1",
      "webhook-timestamp": String(seconds),
      "webhook-signature": standardWebhooksSignature(secret, "dlv_1", seconds, rawBody),
    },
  };
};

describe("verifyWebhookDelivery", () => {
  it("returns the event of a genuine delivery", () => {
    expect(verify()).toEqual({ ...event, signature: JSON.parse(delivery.body).signature });
  });

  it("accepts the raw body as a Buffer and header names in any case", () => {
    expect(verify({ rawBody: Buffer.from(delivery.body), headers: delivery.headers }).eventId).toBe("evt_1");
  });

  it("accepts attempts up to the tolerance away from its clock, either way", () => {
    const at = (seconds: number) => new Date(attemptedAt.getTime() + seconds * 1000);
    expect(verify({ now: at(300) }).eventId).toBe("evt_1");
    expect(verify({ now: at(-300) }).eventId).toBe("evt_1");
    expect(verify({ now: at(60), toleranceSeconds: 60 }).eventId).toBe("evt_1");
  });

  it.each([301, -301])("rejects an attempt timestamp %i s away", (seconds) => {
    expect(failure({ now: new Date(attemptedAt.getTime() + seconds * 1000) })).toBe("timestamp_out_of_tolerance");
  });

  it.each(["x-webhook-signature", "x-webhook-timestamp", "webhook-id", "webhook-timestamp", "webhook-signature"])(
    "rejects a delivery without %s",
    (name) => {
      const headers: Record<string, string | undefined> = { ...lowercased(delivery.headers), [name]: undefined };
      expect(failure({ headers })).toBe("missing_header");
    },
  );

  it("rejects a tampered body", () => {
    expect(failure({ rawBody: delivery.body.replace('"high"', '"low"') })).toBe("signature_mismatch");
  });

  it("rejects a delivery signed with another secret", () => {
    expect(failure({ secret: "another-secret" })).toBe("signature_mismatch");
  });

  it("rejects a captured delivery replayed under a fresh timestamp", () => {
    const later = String(unixSeconds(attemptedAt) + 3600);
    const headers = { ...lowercased(delivery.headers), "x-webhook-timestamp": later, "webhook-timestamp": later };
    expect(failure({ headers, now: new Date(Number(later) * 1000) })).toBe("signature_mismatch");
  });

  it.each([
    ["x-webhook-signature", "md5=abc"],
    ["x-webhook-signature", "824b723c4675a09d59a6c9ff39241079c02861272676e3c2ef03ae1014c49715"],
    ["x-webhook-timestamp", "2025-03-01T12:00:00Z"],
    ["webhook-timestamp", "1"],
    ["webhook-signature", "v2,abc"],
  ])("rejects %s: %s as malformed", (name, value) => {
    expect(failure({ headers: { ...lowercased(delivery.headers), [name]: value } })).toBe("malformed_header");
  });

  it("rejects a header sent twice", () => {
    const signature = delivery.headers["X-Webhook-Signature"] as string;
    const headers = { ...lowercased(delivery.headers), "x-webhook-signature": [signature, signature] };
    expect(failure({ headers })).toBe("malformed_header");
  });

  it("accepts a delivery carrying several webhook-signature entries when one matches", () => {
    const headers = lowercased(delivery.headers);
    headers["webhook-signature"] = `v1,${Buffer.alloc(32).toString("base64")} ${headers["webhook-signature"]}`;
    expect(verify({ headers }).eventId).toBe("evt_1");
  });

  it.each([
    ["not JSON", "{not json"],
    ["not an event", '{"eventId":"evt_1"}'],
    ["an event whose data is not an object", JSON.stringify({ ...event, signature: "0".repeat(64), data: [1] })],
  ])("rejects a signed body that is %s", (_, rawBody) => {
    expect(failure(signedOver(rawBody))).toBe("invalid_body");
  });

  it("rejects a signed body whose signature member does not match its content", () => {
    const body = JSON.parse(delivery.body);
    const forged = JSON.stringify({ ...body, data: { ...body.data, severity: "low" } });
    expect(failure(signedOver(forged))).toBe("body_signature_mismatch");
  });

  it("checks the body signature member over canonical JSON, whatever the key order", () => {
    const body = JSON.parse(delivery.body);
    const { eventId, eventType, timestamp, signature, data } = body;
    const reordered = JSON.stringify({ data, signature, timestamp, eventType, eventId }, null, 2);
    expect(verify(signedOver(reordered)).signature).toBe(body.signature);
  });

  it("says what failed in its message", () => {
    expect(() => verify({ secret: "another-secret" })).toThrow("X-Webhook-Signature does not match the body");
    expect(() => verify({ headers: {} })).toThrow(WebhookVerificationError);
  });
});
