// The webhook receiver of the delivery benchmark, in a process of its own (forked, with an IPC
// channel): an HTTPS server that answers 204 at once, after RECEIVER_SLOW_MS under /slow/ (as a
// distant endpoint would), or never under /blackhole/, and notes each request's delivery id, event
// id, path and arrival time. The harness asks for those notes over IPC ("take" hands them over and
// starts afresh). Nothing is verified here, so the receiver costs the service and the bare sender
// the same.
import https from "node:https";

interface Arrival {
  deliveryId: string;
  eventId: string;
  path: string;
  at: number;
}

const key = process.env.RECEIVER_KEY!;
const cert = process.env.RECEIVER_CERT!;
const SLOW_ANSWER_MS = Number(process.env.RECEIVER_SLOW_MS);
let arrivals: Arrival[] = [];

const server = https.createServer({ key, cert, keepAliveTimeout: 30_000 }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const path = req.url ?? "/";
    let eventId = "";
    try {
      eventId = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { eventId: string }).eventId;
    } catch {
      // noted with an empty event id: the harness counts those as wrong
    }
    arrivals.push({ deliveryId: String(req.headers["x-webhook-id"] ?? ""), eventId, path, at: Date.now() });
    if (path.startsWith("/blackhole/")) return; // never answered; the sender's timeout ends it
    if (path.startsWith("/slow/")) setTimeout(() => res.writeHead(204).end(), SLOW_ANSWER_MS);
    else res.writeHead(204).end();
  });
});
server.headersTimeout = 0;
server.requestTimeout = 0;

process.on("message", (msg: { type: string }) => {
  if (msg.type !== "take") return;
  process.send!({ type: "arrivals", arrivals });
  arrivals = [];
});
process.on("disconnect", () => process.exit(0));

server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  process.send!({ type: "listening", port: typeof address === "object" && address ? address.port : 0 });
});
