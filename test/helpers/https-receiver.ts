// A local HTTPS webhook receiver that records every request and whose answer can change mid-test.
import https from "node:https";
import type { IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  receivedAt: number;
}

export interface Answer {
  status: number;
  /** Wait this long before answering (timeouts, slow receivers). */
  delayMs?: number;
  /** Answer only once this settles, too (an answer held until the test has done something). */
  after?: Promise<unknown>;
  headers?: Record<string, string>;
}

export interface HttpsReceiver {
  port: number;
  url(path?: string): string;
  requests: ReceivedRequest[];
  /** Chooses the answer to each request; `n` counts requests to the same path from 1. */
  answer: (req: ReceivedRequest, n: number) => Answer;
  /** Resolves when `predicate` holds, or rejects after `timeoutMs`. */
  waitFor(predicate: (requests: ReceivedRequest[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startHttpsReceiver({ key, cert }: { key: string; cert: string }): Promise<HttpsReceiver> {
  const pending = new Set<NodeJS.Timeout>();
  const receiver: HttpsReceiver = {
    port: 0,
    url: (path = "/hook") => `https://127.0.0.1:${receiver.port}${path}`,
    requests: [],
    answer: () => ({ status: 200 }),
    async waitFor(predicate, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(receiver.requests)) {
        if (Date.now() > deadline)
          throw new Error(`receiver: condition not met within ${timeoutMs} ms (${receiver.requests.length} requests)`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of pending) clearTimeout(t);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const server = https.createServer({ key, cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const received = {
        path: req.url ?? "",
        headers: req.headers,
        rawBody: Buffer.concat(chunks),
        receivedAt: Date.now(),
      };
      receiver.requests.push(received);
      const n = receiver.requests.filter((r) => r.path === received.path).length;
      const { status, delayMs = 0, after, headers = {} } = receiver.answer(received, n);
      const timer = setTimeout(() => {
        pending.delete(timer);
        void Promise.resolve(after)
          .catch(() => {})
          .then(() => res.writeHead(status, headers).end());
      }, delayMs);
      pending.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.port = (server.address() as AddressInfo).port;
  return receiver;
}
