// Requests Node's HTTP parser cannot read (bytes outside the grammar, a head over 16 KiB, framing
// that lies) never reach Koa: Node answers them itself with a bare status and no body. Answered
// here in the service's own words instead, so every error a client sees is problem+json (docs/spec/CONTRACT.md §2).
import type http from "node:http";
import type { Duplex } from "node:stream";
import { problem, PROBLEM_CONTENT_TYPE, type Problem } from "./problem.ts";

function answerFor(code: string | undefined): { status: number; reason: string; body?: Problem } {
  switch (code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { status: 408, reason: "Request Timeout" }; // the client stopped sending; it is not reading either
    case "HPE_HEADER_OVERFLOW":
      return {
        status: 431,
        reason: "Request Header Fields Too Large",
        body: {
          ...problem("payload_too_large", "The request line and headers are larger than 16 KiB"),
          status: 431,
          title: "Request header fields too large",
        },
      };
    default:
      return {
        status: 400,
        reason: "Bad Request",
        body: problem("validation_failed", "The request is not valid HTTP/1.1 and could not be read"),
      };
  }
}

export function answerClientErrors(server: http.Server): void {
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex & { _httpMessage?: http.ServerResponse }) => {
    // Like Node's own handler: nothing to say once an answer has begun or the client is gone.
    if (!socket.writable || socket._httpMessage?.headersSent) {
      socket.destroy();
      return;
    }
    const { status, reason, body } = answerFor(err.code);
    const text = body ? JSON.stringify(body) : "";
    const head = [`HTTP/1.1 ${status} ${reason}`, "Connection: close", `Content-Length: ${Buffer.byteLength(text)}`];
    if (body) head.push(`Content-Type: ${PROBLEM_CONTENT_TYPE}`);
    socket.end(`${head.join("\r\n")}\r\n\r\n${text}`);
  });
}
