// A graphql-ws client that stops reading must not make the service hold its messages without end:
// once more than `maxBufferedBytes` wait unsent on a socket, the socket is closed with 1008 (Policy
// Violation) and a reason saying why, and destroyed soon after if the client does not read on.
// Closing it ends its subscriptions (graphql-ws disposes them), which releases what they held.
import type { WebSocket } from "ws";

export const STALLED_CLOSE_CODE = 1008;
/** How long a stalled client has to read up to the close frame before its socket is destroyed. */
const CLOSE_GRACE_MS = 5000;

export function closeWhenStalled(socket: WebSocket, maxBufferedBytes: number): void {
  const closeIfStalled = () => {
    checking = false;
    if (socket.readyState !== socket.OPEN || socket.bufferedAmount <= maxBufferedBytes) return;
    socket.close(STALLED_CLOSE_CODE, `Client too slow: over ${maxBufferedBytes} bytes unread`);
    const destroy = setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref();
    socket.once("close", () => clearTimeout(destroy));
  };
  let checking = false;
  const send = socket.send.bind(socket) as (...args: unknown[]) => void;
  socket.send = ((...args: unknown[]) => {
    send(...args);
    if (checking) return;
    checking = true;
    // Once the turn's writes have left the cork (batched-writes.ts): what the kernel took is not unread.
    process.nextTick(closeIfStalled);
  }) as WebSocket["send"];
}
