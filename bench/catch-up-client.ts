// One graphql-ws subscriber that resumes from the start of the event log and catches up, in a worker
// thread of its own (bench/events.ts): its 20,000 messages a second must not hold up the event loop
// that times the live subscribers' arrivals. It loads and connects first and posts "ready"; told "go",
// it subscribes, and posts { seconds, received, repeated } once it has `count` events. Measured from
// "go", so that the thread's start (tsx compiling this file) is not counted as the catch-up's.
import { parentPort, workerData } from "node:worker_threads";
import { createClient } from "graphql-ws";
import WebSocket from "ws";

const { url, token, after, count } = workerData as { url: string; token: string; after: string; count: number };
const client = createClient({
  url,
  webSocketImpl: WebSocket,
  lazy: false,
  retryAttempts: 0,
  connectionParams: { authorization: `Bearer ${token}` },
  on: { connected: () => parentPort!.postMessage("ready") },
});
parentPort!.once("message", () => {
  const seen = new Set<string>();
  let received = 0;
  const started = Date.now();
  client.subscribe<{ events: { eventId: string } }>(
    {
      query: "subscription($after: String) { events(after: $after) { eventId timestamp cursor } }",
      variables: { after },
    },
    {
      next: ({ data }) => {
        received++;
        seen.add(data!.events.eventId);
        if (received !== count) return;
        parentPort!.postMessage({ seconds: (Date.now() - started) / 1000, received, repeated: received - seen.size });
        void Promise.resolve(client.dispose()).then(() => process.exit(0));
      },
      error: (err) => {
        throw err instanceof Error ? err : new Error(JSON.stringify(err));
      },
      complete: () => {},
    },
  );
});
