import { Webhook } from "standardwebhooks";
import { bodySignature, buildDeliveryRequest, type DeliveryAttemptInput } from "../../src/dispatcher/signing.ts";

// Expected values computed independently with `openssl dgst -sha256 -hmac s3cret`.
const vector: DeliveryAttemptInput = {
  secret: "s3cret",
  deliveryId: "dlv_1",
  eventId: "evt_1",
  eventType: "scan.completed",
  timestamp: "2025-01-01T00:00:00.000Z",
  data: { b: [true, null], a: 1 },
  attemptedAt: new Date("2025-01-01T00:05:00.750Z"),
};
const VECTOR_BODY_SIGNATURE = "6b2b33eeede2c764f646a9516189d7f5a8245de330903db287c386e66c3535da";

const attempt = (overrides: Partial<DeliveryAttemptInput> = {}): DeliveryAttemptInput => ({
  ...vector,
  attemptedAt: new Date(),
  ...overrides,
});

describe("buildDeliveryRequest", () => {
  it("sends the body members in contract order, with the JCS body signature", () => {
    const { body } = buildDeliveryRequest(vector);
    expect(body).toBe(
      `{"eventId":"evt_1","eventType":"scan.completed","timestamp":"2025-01-01T00:00:00.000Z",` +
        `"signature":"${VECTOR_BODY_SIGNATURE}","data":{"b":[true,null],"a":1}}`,
    );
  });

  it("sends the contract headers, signed over the exact body bytes", () => {
    expect(buildDeliveryRequest(vector).headers).toEqual({
      "Content-Type": "application/json",
      "User-Agent": "appsec-service-webhooks/1.0",
      "X-Webhook-Id": "dlv_1",
      "X-Webhook-Event": "scan.completed",
      "X-Webhook-Timestamp": "1735689900",
      "X-Webhook-Signature": "sha256=824b723c4675a09d59a6c9ff39241079c02861272676e3c2ef03ae1014c49715",
      "webhook-id": "dlv_1",
      "webhook-timestamp": "1735689900",
      "webhook-signature": "v1,YkAnLmziJfbtyDNwxQPAYyiZk1sJ6kFe/dMbmddJeJg=",
    });
  });

  it("gives the same body signature whatever the key order, but different raw-body signatures", () => {
    const ab = buildDeliveryRequest(attempt({ data: { a: 1, nested: { x: 1, y: 2 } } }));
    const ba = buildDeliveryRequest(attempt({ data: { nested: { y: 2, x: 1 }, a: 1 } }));
    expect(JSON.parse(ab.body).signature).toBe(JSON.parse(ba.body).signature);
    expect(ab.headers["X-Webhook-Signature"]).not.toBe(ba.headers["X-Webhook-Signature"]);
  });

  it("signs the body without its signature member", () => {
    const unsigned = { eventId: "evt_1", eventType: "scan.completed", timestamp: vector.timestamp, data: vector.data };
    expect(bodySignature("s3cret", unsigned)).toBe(VECTOR_BODY_SIGNATURE);
    expect(bodySignature("s3cret", { ...unsigned, eventId: "evt_2" })).not.toBe(VECTOR_BODY_SIGNATURE);
  });

  it("keeps the delivery id on every retry and refreshes the attempt timestamp", () => {
    const first = buildDeliveryRequest(vector);
    const retry = buildDeliveryRequest({ ...vector, attemptedAt: new Date("2025-01-01T00:05:20Z") });
    expect(retry.headers["X-Webhook-Id"]).toBe(first.headers["X-Webhook-Id"]);
    expect(retry.headers["X-Webhook-Timestamp"]).toBe("1735689920");
    expect(retry.body).toBe(first.body);
    expect(retry.headers["webhook-signature"]).not.toBe(first.headers["webhook-signature"]);
  });
});

describe("a receiver using the standardwebhooks package", () => {
  it.each([
    ["an ASCII secret", "s3cret"],
    ["a non-ASCII secret", "sécret-ü-🔑"],
  ])("verifies with %s given as UTF-8 bytes in raw format, or as their base64", (_, secret) => {
    const { body, headers } = buildDeliveryRequest(attempt({ secret }));
    const expected = JSON.parse(body);
    expect(new Webhook(Buffer.from(secret, "utf8"), { format: "raw" }).verify(body, headers)).toEqual(expected);
    expect(new Webhook(Buffer.from(secret, "utf8").toString("base64")).verify(body, headers)).toEqual(expected);
    expect(new Webhook(Buffer.from(secret, "utf8"), { format: "raw" }).verify(Buffer.from(body), headers)).toEqual(
      expected,
    );
  });

  it("cannot use a non-ASCII secret string in raw format (the pitfall the recipe warns about)", () => {
    const secret = "sécret-ü";
    const { body, headers } = buildDeliveryRequest(attempt({ secret }));
    expect(() => new Webhook(secret, { format: "raw" }).verify(body, headers)).toThrow("No matching signature found");
  });

  it("rejects a tampered body, a wrong secret and an old attempt", () => {
    const { body, headers } = buildDeliveryRequest(attempt());
    const receiver = new Webhook(Buffer.from("s3cret"), { format: "raw" });
    expect(() => receiver.verify(body.replace('"a":1', '"a":2'), headers)).toThrow("No matching signature found");
    expect(() => new Webhook(Buffer.from("other"), { format: "raw" }).verify(body, headers)).toThrow(
      "No matching signature found",
    );
    const old = buildDeliveryRequest(attempt({ attemptedAt: new Date(Date.now() - 10 * 60_000) }));
    expect(() => receiver.verify(old.body, old.headers)).toThrow("Message timestamp too old");
  });
});
