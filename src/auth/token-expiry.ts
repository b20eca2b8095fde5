// Ends a long-lived connection (a graphql-ws socket, an SSE stream) when the token that opened it
// expires. setTimeout holds at most about 24.8 days, so longer-lived tokens are re-armed.
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** Calls `expire` at `exp` (Unix seconds); the returned function cancels it. */
export function onTokenExpiry(exp: number, expire: () => void): () => void {
  let timer: NodeJS.Timeout;
  const arm = () => {
    const ms = exp * 1000 - Date.now();
    timer = setTimeout(() => (ms > MAX_TIMEOUT_MS ? arm() : expire()), Math.min(Math.max(ms, 0), MAX_TIMEOUT_MS));
    timer.unref();
  };
  arm();
  return () => clearTimeout(timer);
}
