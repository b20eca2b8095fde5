// Sends a fuzz request and reports what came back: the final status, how long it took, and whether
// the answer was whole. HTTP requests go through an undici keep-alive pool; raw ones over their own
// socket, read until the server closes it.
import net from "node:net";
import type { Pool } from "undici";
import type { HttpFuzzRequest, RawFuzzRequest } from "./fuzz-request.ts";

export interface Outcome {
  /** Final (non-1xx) status; undefined when no complete answer arrived. */
  status?: number;
  contentType?: string;
  body?: string;
  /** Why the answer is missing or cut short (reset, socket hang up, timeout). */
  error?: string;
  ms: number;
}

/** Past this the request is abandoned; anything over the property's 5 s already fails it. */
const GIVE_UP_MS = 8000;

export async function sendHttp(pool: Pool, request: HttpFuzzRequest): Promise<Outcome> {
  const started = performance.now();
  try {
    const res = await pool.request({
      method: request.method,
      path: request.path,
      headers: request.headers.flat(),
      body: request.body,
      signal: AbortSignal.timeout(GIVE_UP_MS),
    });
    const body = await res.body.text();
    const type = res.headers["content-type"];
    return {
      status: res.statusCode,
      contentType: Array.isArray(type) ? type.join(", ") : type,
      body,
      ms: performance.now() - started,
    };
  } catch (err) {
    return {
      error: `${(err as Error).name}: ${(err as Error).message} (${(err as { code?: string }).code ?? "no code"})`,
      ms: performance.now() - started,
    };
  }
}

const HEAD_END = "\r\n\r\n";

/** The first final status in what the server wrote, skipping interim answers such as 100 Continue. */
function finalStatus(received: string): number | undefined {
  let rest = received;
  for (;;) {
    const match = /^HTTP\/1\.[01] (\d{3}) /.exec(rest);
    const end = rest.indexOf(HEAD_END);
    if (!match || end < 0) return undefined;
    const status = Number(match[1]);
    if (status >= 200) return status;
    rest = rest.slice(end + HEAD_END.length);
  }
}

export function sendRaw(port: number, request: RawFuzzRequest): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let settled = false;
    const settle = (error?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const received = Buffer.concat(chunks).toString("latin1");
      const status = finalStatus(received);
      // A reset that comes after a whole answer head is TCP, not the service: closing a socket that
      // still holds unread request bytes (a body the server refused to read) makes the kernel send
      // RST. The answer was given; only a reset before it counts.
      const missing = status === undefined ? (error ?? "connection closed without an answer") : undefined;
      resolve({
        status,
        error: missing,
        body: received.slice(received.indexOf(HEAD_END) + HEAD_END.length, 2000),
        ms: performance.now() - started,
      });
    };
    const timer = setTimeout(() => settle(`no answer within ${GIVE_UP_MS} ms`), GIVE_UP_MS);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("end", () => settle());
    socket.on("close", () => settle());
    socket.on("error", (err: NodeJS.ErrnoException) => settle(`${err.code ?? err.name}: ${err.message}`));
    socket.write(request.bytes);
  });
}
