// A minimal webhook receiver: verifies each delivery, dedupes by eventId, answers 204.
//   WEBHOOK_SECRET=... TLS_KEY=key.pem TLS_CERT=cert.pem PORT=9443 node --import tsx examples/webhook-receiver.ts
import { readFileSync } from "node:fs";
import https from "node:https";
import { verifyWebhookDelivery, WebhookVerificationError } from "appsec-service/webhook-verify";

const secret = process.env.WEBHOOK_SECRET!;
const seen = new Set<string>(); // use a database table with a unique key in production

const server = https.createServer(
  { key: readFileSync(process.env.TLS_KEY!), cert: readFileSync(process.env.TLS_CERT!) },
  (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      try {
        const event = verifyWebhookDelivery({ rawBody: Buffer.concat(chunks), secret, headers: req.headers });
        if (!seen.has(event.eventId)) {
          seen.add(event.eventId);
          console.log(`${event.eventType} ${event.eventId} ${JSON.stringify(event.data)}`);
        }
        res.writeHead(204).end();
      } catch (err) {
        if (!(err instanceof WebhookVerificationError)) throw err;
        console.log(`rejected: ${err.reason}: ${err.message}`);
        res.writeHead(400).end(); // a 4xx is not retried
      }
    });
  },
);
server.listen(Number(process.env.PORT ?? 9443), () => console.log("receiver listening"));
