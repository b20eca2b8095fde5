// Follows live scan status over graphql-ws.
//   TOKEN=... APP=<application id> node --import tsx examples/subscribe.ts
import { createClient } from "graphql-ws";
import WebSocket from "ws";

const client = createClient({
  url: process.env.URL ?? "ws://localhost:8080/graphql",
  webSocketImpl: WebSocket,
  connectionParams: { authorization: `Bearer ${process.env.TOKEN}` },
  // A missing, bad or expired token closes the socket with 4403: retrying will not help.
  shouldRetry: () => false,
  on: { closed: (event) => console.error(`closed: ${(event as { code?: number }).code}`) },
});

client.subscribe(
  {
    query:
      "subscription($app: ID) { scanUpdated(applicationId: $app) { id scanType status summary { totalFindings critical } } }",
    variables: { app: process.env.APP },
  },
  {
    next: (value) => console.log(JSON.stringify(value)),
    error: (err) => console.error(err instanceof Error ? err.message : "subscription ended"),
    complete: () => {},
  },
);
