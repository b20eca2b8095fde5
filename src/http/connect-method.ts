// CONNECT asks for a tunnel, which only a proxy gives. Node hands such a request to the server's
// 'connect' listeners and, when there is none, closes the socket without a word: the client sees a
// reset. Answered here instead, like any other method the service does not serve (docs/spec/CONTRACT.md §2).
import type http from "node:http";
import type { Duplex } from "node:stream";
import { problem, PROBLEM_CONTENT_TYPE } from "./problem.ts";

/** The methods some route of the service answers (the target of a CONNECT is no route). */
const SERVED_METHODS = "GET, HEAD, POST, PUT, DELETE";

export function refuseConnect(server: http.Server): void {
  server.on("connect", (_req: http.IncomingMessage, socket: Duplex) => {
    socket.on("error", () => socket.destroy()); // a client gone already needs no answer
    const body = JSON.stringify(problem("method_not_allowed", "CONNECT is not allowed: this service is not a proxy"));
    socket.end(
      [
        "HTTP/1.1 405 Method Not Allowed",
        `Allow: ${SERVED_METHODS}`,
        `Content-Type: ${PROBLEM_CONTENT_TYPE}`,
        `Content-Length: ${Buffer.byteLength(body)}`,
        "Connection: close",
        "",
        body,
      ].join("\r\n"),
    );
  });
}
