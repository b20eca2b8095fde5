// A GraphQL subscription over SSE read the way an EventSource reads it: each event's id, name and
// data, from a real HTTP stream that the test can cut at any moment.

export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

export interface SseStream {
  status: number;
  /** Resolves when the stream ends (server closed it, or the test aborted it). */
  ended: Promise<void>;
  abort(): void;
}

/** Opens `query` over SSE (POST, as graphql-sse's distinct connections mode does) and calls `onEvent` per event. */
export async function openSse(
  baseUrl: string,
  options: { query: string; variables?: Record<string, unknown>; token: string; lastEventId?: string },
  onEvent: (event: SseEvent) => void,
): Promise<SseStream> {
  const controller = new AbortController();
  const res = await fetch(`${baseUrl}/graphql`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "text/event-stream",
      authorization: `Bearer ${options.token}`,
      ...(options.lastEventId && { "last-event-id": options.lastEventId }),
    },
    body: JSON.stringify({ query: options.query, variables: options.variables }),
    signal: controller.signal,
  });
  const ended = (async () => {
    if (!res.body) return;
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event: SseEvent = { event: "message", data: "" };
          let fields = 0;
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) continue; // a comment (the server's pings)
            const colon = line.indexOf(":");
            const name = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
            fields++;
            if (name === "id") event.id = value;
            else if (name === "event") event.event = value;
            else if (name === "data") event.data += value;
          }
          if (fields > 0) onEvent(event);
        }
      }
    } catch {
      // aborted by the test, or cut by the server
    }
  })();
  return { status: res.status, ended, abort: () => controller.abort() };
}
