// The baseline of the delivery benchmark, in a process of its own: the same signed requests the
// dispatcher builds (buildDeliveryRequest: the JCS body signature, the raw-body and the Standard
// Webhooks HMACs), POSTed with undici over keep-alive connections with a fixed number in flight,
// and no database at all. Whatever the service adds on top of this is the cost of its guarantees.
import { Agent, request } from "undici";
import { newId } from "../src/ids.ts";
import { buildDeliveryRequest } from "../src/dispatcher/signing.ts";

const { url, count, inFlight, ca } = JSON.parse(process.argv[2]!) as {
  url: string;
  count: number;
  inFlight: number;
  ca: string;
};
const agent = new Agent({ connect: { ca } });
const secret = "bench-webhook-secret";

function signed(i: number) {
  const occurredAt = new Date();
  return buildDeliveryRequest({
    secret,
    deliveryId: newId(),
    eventId: newId(),
    eventType: "vulnerability.created",
    timestamp: occurredAt.toISOString(),
    data: {
      id: newId(),
      severity: "high",
      applicationId: newId(),
      title: `Bare sender finding ${i}`,
      createdAt: occurredAt.toISOString(),
    },
    attemptedAt: occurredAt,
  });
}

let next = 0;
let failed = 0;
async function worker(): Promise<void> {
  while (next < count) {
    const delivery = signed(next++);
    const res = await request(url, {
      method: "POST",
      headers: delivery.headers,
      body: delivery.body,
      dispatcher: agent,
    });
    await res.body.dump();
    if (res.statusCode !== 204) failed++;
  }
}

const started = performance.now();
await Promise.all(Array.from({ length: inFlight }, worker));
const seconds = (performance.now() - started) / 1000;
process.stdout.write(JSON.stringify({ sent: count, failed, seconds, perSecond: count / seconds }));
await agent.close();
