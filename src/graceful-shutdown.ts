// Stopping in the order load balancers expect (docs/spec/CONTRACT.md §9). From the signal on, /readyz answers
// 503 and every response says `Connection: close`, but requests are still served for the drain
// period: a load balancer's health checks take the instance out of rotation before it stops
// listening. Meanwhile the background workers stop and hand their leases back, so other instances
// take the work over at once. Then no new connection is taken, graphql-ws sockets are closed with
// 1001 (going away) and SSE streams ended, so live clients reconnect elsewhere, and requests in
// flight get the grace period to finish. What still runs after it is cut, and its database
// connection ended, so its transaction rolls back rather than commit with nobody to answer.
import type http from "node:http";
import { setTimeout as delay } from "node:timers/promises";
import type { BackgroundWorker } from "./background-worker.ts";
import type { GraphqlWsServer } from "./graphql/ws.ts";
import type { LiveStreams } from "./http/live-streams.ts";
import type { ServerConnections } from "./http/server-connections.ts";
import type { Logger } from "./log.ts";

export interface ShutdownSteps {
  log: Logger;
  drainMs: number;
  graceMs: number;
  server: http.Server;
  connections: ServerConnections;
  workers: readonly BackgroundWorker[];
  graphqlWs: readonly GraphqlWsServer[];
  liveStreams: LiveStreams;
  /** Ends the database connections of requests still running when the grace period is over (their transactions roll back). */
  abandonRequests(): void;
  /** What is left once no connection remains: the event feed, Redis, the report readers, the database. */
  release(): Promise<void>;
}

/** Resolves with true once `done` settles, or with false after `ms`. */
async function within(ms: number, done: Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(resolve, ms, false)));
  try {
    return await Promise.race([done.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Each step is logged once, as it is reached; `signal` names what started it. */
export async function shutDownGracefully(steps: ShutdownSteps, signal?: string): Promise<void> {
  const { log, drainMs, graceMs, connections } = steps;
  const started = Date.now();
  const elapsedMs = () => Date.now() - started;

  log.info({ signal, drainMs, graceMs }, "shutting down: /readyz answers 503, requests still served while draining");
  connections.closeAfterResponses();
  const workersStopped = Promise.all(steps.workers.map((worker) => worker.stop())).then(() =>
    log.info(
      { workers: steps.workers.map((worker) => worker.name), elapsedMs: elapsedMs() },
      "background workers stopped, their leases released",
    ),
  );
  if (drainMs > 0) await delay(drainMs);

  if (steps.server.listening) steps.server.close();
  log.info({ inFlight: connections.inFlight, elapsedMs: elapsedMs() }, "stopped accepting connections");
  const graphqlWs = steps.graphqlWs.reduce((sum, server) => sum + server.connections, 0);
  const graphqlWsClosed = Promise.all(steps.graphqlWs.map((server) => server.close()));
  const eventStreams = steps.liveStreams.endAll();
  log.info(
    { graphqlWs, eventStreams },
    "live connections closed: graphql-ws with 1001 going away, event streams ended",
  );

  if (await within(graceMs, connections.allClosed())) {
    log.info({ elapsedMs: elapsedMs() }, "in-flight requests finished");
  } else {
    const requests = connections.inFlight;
    const sockets = connections.destroyAll();
    steps.abandonRequests();
    log.warn(
      { requests, sockets, graceMs },
      "grace period over: open connections cut, the transactions of their requests rolled back",
    );
  }
  await Promise.all([workersStopped, graphqlWsClosed]);
  await steps.release();
  log.info({ elapsedMs: elapsedMs() }, "shutdown complete");
}
