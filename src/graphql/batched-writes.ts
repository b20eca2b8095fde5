// graphql-ws awaits each message's write before it sends the next one, so a replay (§14) went out
// one system call per message: a third of the service's time while a client caught up. Here a send
// is acknowledged at once while little is buffered, and the TCP socket is corked until the current
// run of callbacks ends, so the messages one turn of the event loop produces leave in one writev.
// Past `acknowledgeBelow` buffered bytes a send is acknowledged when written again (backpressure);
// a client that stops reading is still closed by stalled-sockets.ts.
import type { Socket } from "node:net";
import type { WebSocket } from "ws";

type SendCallback = (err?: Error) => void;

export function batchWrites(socket: WebSocket, acknowledgeBelow: number): void {
  const tcp = (socket as unknown as { _socket?: Socket })._socket;
  if (!tcp) return;
  const send = socket.send.bind(socket) as (data: unknown, options: object, cb?: SendCallback) => void;
  let corked = false;
  socket.send = ((data: unknown, optionsOrCallback?: object | SendCallback, callback?: SendCallback) => {
    const cb = typeof optionsOrCallback === "function" ? (optionsOrCallback as SendCallback) : callback;
    const options = typeof optionsOrCallback === "object" ? optionsOrCallback : {};
    if (!corked && socket.readyState === socket.OPEN) {
      corked = true;
      tcp.cork();
      process.nextTick(() => {
        corked = false;
        tcp.uncork();
      });
    }
    if (!cb || socket.bufferedAmount >= acknowledgeBelow) return send(data, options, cb);
    // A failed write closes the socket, which ends its subscriptions: nothing to tell the sender.
    send(data, options, () => {});
    queueMicrotask(() => cb());
  }) as WebSocket["send"];
}
