// What a graceful shutdown needs to know of an HTTP server: its open sockets (upgraded WebSockets
// included, which Node's closeAllConnections does not reach) and its requests in flight. Once
// closing, every response says `Connection: close` and its socket ends with it, so keep-alive
// clients and load balancers open their next connection elsewhere instead of reusing this one.
import type http from "node:http";
import type { Socket } from "node:net";

export interface ServerConnections {
  /** Requests whose response has not ended. */
  readonly inFlight: number;
  /** From now on every response closes its connection; idle keep-alive connections close now. */
  closeAfterResponses(): void;
  /** Resolves once every socket is closed. */
  allClosed(): Promise<void>;
  /** Destroys every socket still open (the grace period is over); returns how many. */
  destroyAll(): number;
}

export function trackConnections(server: http.Server): ServerConnections {
  const sockets = new Set<Socket>();
  const responses = new Set<http.ServerResponse>();
  let whenEmpty: Array<() => void> = [];
  let closing = false;

  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => {
      sockets.delete(socket);
      if (sockets.size > 0) return;
      for (const resolve of whenEmpty) resolve();
      whenEmpty = [];
    });
  });
  // Ahead of Koa's listener, so the flag is set before any middleware could answer.
  server.prependListener("request", (_req: http.IncomingMessage, res: http.ServerResponse) => {
    responses.add(res);
    if (closing) res.shouldKeepAlive = false; // Node then writes `Connection: close` and ends the socket after it
    res.once("close", () => responses.delete(res));
  });

  return {
    get inFlight() {
      return responses.size;
    },
    closeAfterResponses() {
      closing = true;
      for (const res of responses) {
        if (!res.headersSent) res.shouldKeepAlive = false;
        else {
          // Its headers promised keep-alive: end the connection once this response is over.
          const socket = res.socket;
          res.once("close", () => socket?.end());
        }
      }
      // Once only: Node counts a connection that has not yet sent its request as idle too, and
      // requests keep coming while the service drains.
      server.closeIdleConnections();
    },
    allClosed() {
      if (sockets.size === 0) return Promise.resolve();
      return new Promise((resolve) => whenEmpty.push(resolve));
    },
    destroyAll() {
      const count = sockets.size;
      for (const socket of sockets) socket.destroy();
      return count;
    },
  };
}
