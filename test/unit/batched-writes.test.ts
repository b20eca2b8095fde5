// Sends acknowledged early and written together (src/graphql/batched-writes.ts), on a real
// WebSocket server and client over TCP: a turn's messages leave in one write, every message
// arrives in order, and a client that stops reading stops the acknowledgements (backpressure).
import type { AddressInfo, Socket } from "node:net";
import { WebSocket, WebSocketServer } from "ws";
import { batchWrites } from "../../src/graphql/batched-writes.ts";

const ACKNOWLEDGE_BELOW = 64 * 1024;

let wss: WebSocketServer;
let client: WebSocket;
let server: WebSocket;
/** The server's TCP writes: each is one system call (write or writev). */
let writes: number;

beforeEach(async () => {
  wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await new Promise((resolve) => wss.once("listening", resolve));
  const connected = new Promise<WebSocket>((resolve) => wss.once("connection", resolve));
  client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
  server = await connected;
  await new Promise((resolve) => client.once("open", resolve));
  batchWrites(server, ACKNOWLEDGE_BELOW);
  const tcp = (
    server as unknown as {
      _socket: Socket & { _writev: (...args: unknown[]) => void; _write: (...args: unknown[]) => void };
    }
  )._socket;
  writes = 0;
  for (const method of ["_write", "_writev"] as const) {
    const original = tcp[method].bind(tcp);
    tcp[method] = (...args: unknown[]) => {
      writes++;
      return original(...args);
    };
  }
});
afterEach(async () => {
  client?.terminate();
  await new Promise((resolve) => wss.close(resolve));
});

/** As graphql-ws sends: one message, and the next only once the previous send's callback came. */
const sendAwaiting = (message: string) =>
  new Promise<void>((resolve, reject) => server.send(message, (err) => (err ? reject(err) : resolve())));

function receive(count: number): Promise<string[]> {
  const got: string[] = [];
  return new Promise((resolve) =>
    client.on("message", (data) => {
      got.push(data.toString());
      if (got.length === count) resolve(got);
    }),
  );
}

it("writes the messages of one turn together, in order, each send acknowledged", async () => {
  const messages = Array.from({ length: 200 }, (_, i) => JSON.stringify({ type: "next", id: "1", payload: { i } }));
  const received = receive(messages.length);
  for (const message of messages) await sendAwaiting(message);
  expect(await received).toEqual(messages);
  // Unbatched, each message is its own write: 200.
  expect(writes).toBeLessThanOrEqual(2);
});

it("acknowledges a send only once written when more than the threshold is buffered, so a client that stops reading holds the sender back", async () => {
  (client as unknown as { _socket: Socket })._socket.pause();
  const big = "x".repeat(16 * 1024);
  let acknowledged = 0;
  const sender = (async () => {
    for (let i = 0; i < 10_000; i++) {
      await sendAwaiting(big);
      acknowledged++;
    }
  })().catch(() => {});
  await new Promise((resolve) => setTimeout(resolve, 500));
  const held = acknowledged;
  expect(held).toBeLessThan(10_000);
  expect(server.bufferedAmount).toBeGreaterThanOrEqual(ACKNOWLEDGE_BELOW);
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(acknowledged).toBe(held); // stuck while the client does not read

  const more = receive(1);
  (client as unknown as { _socket: Socket })._socket.resume();
  await more;
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(acknowledged).toBeGreaterThan(held);
  client.terminate();
  await sender;
});
