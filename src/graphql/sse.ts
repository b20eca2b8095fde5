// Subscriptions over SSE (GraphQL over SSE, "distinct connections" mode, as Yoga streams them) with
// one addition: each event's `id:` is its cursor in the event log, so an EventSource that reconnects
// sends it back as Last-Event-ID and resumes after it (docs/spec/CONTRACT.md §14). Yoga's own SSE writer sends no
// ids; this plugin takes its place for subscriptions that stream, and leaves every other answer to it.
import type { ExecutionResult } from "graphql";
import { isAsyncIterable, type Plugin } from "graphql-yoga";
import { encodeEventCursor } from "../events/event-log.ts";
import type { GraphQLContext } from "./context.ts";
import { EVENT_POSITION } from "./shared-subscriptions.ts";

/** A comment line now and then keeps proxies from closing an idle stream. */
const PING_INTERVAL_MS = 12_000;

type Tagged = ExecutionResult & { [EVENT_POSITION]?: number };

/** The result as JSON, without the extensions that only mean something to the HTTP answer. */
function stringify(result: ExecutionResult): string {
  if (!result.errors?.length) return JSON.stringify(result);
  const errors = result.errors.map((error) => {
    const { http: _http, unexpected: _unexpected, ...extensions } = (error.extensions ?? {}) as Record<string, unknown>;
    return { ...error.toJSON(), extensions: Object.keys(extensions).length ? extensions : undefined };
  });
  return JSON.stringify({ ...result, errors });
}

function sseResponse(
  results: AsyncIterable<Tagged>,
  fetchAPI: { ReadableStream: typeof ReadableStream; Response: typeof Response },
): Response {
  const encoder = new TextEncoder();
  const iterator = results[Symbol.asyncIterator]();
  let ping: NodeJS.Timeout | undefined;
  const body = new fetchAPI.ReadableStream<Uint8Array>({
    start(controller) {
      // Something at once: some clients wait for the first bytes before they consider the stream open.
      controller.enqueue(encoder.encode(":\n\n"));
      ping = setInterval(() => {
        if (controller.desiredSize === null) clearInterval(ping);
        else if (controller.desiredSize > 0) controller.enqueue(encoder.encode(":\n\n"));
      }, PING_INTERVAL_MS);
    },
    async pull(controller) {
      try {
        const step = await iterator.next();
        if (!step.done) {
          const position = step.value[EVENT_POSITION];
          const id = position === undefined ? "" : `id: ${encodeEventCursor(position)}\n`;
          controller.enqueue(encoder.encode(`${id}event: next\ndata: ${stringify(step.value)}\n\n`));
          return;
        }
        controller.enqueue(encoder.encode("event: complete\ndata:\n\n"));
        clearInterval(ping);
        controller.close();
      } catch (err) {
        clearInterval(ping);
        controller.error(err);
      }
    },
    async cancel() {
      clearInterval(ping);
      await iterator.return?.();
    },
  });
  return new fetchAPI.Response(body, {
    status: 200,
    headers: { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", "Content-Encoding": "none" },
  });
}

export function sseWithEventIds(): Plugin<GraphQLContext> {
  return {
    onResultProcess({ request, result, setResultProcessor }) {
      if (!isAsyncIterable(result) || !(request.headers.get("accept") ?? "").includes("text/event-stream")) return;
      setResultProcessor(
        (results, fetchAPI) => sseResponse(results as AsyncIterable<Tagged>, fetchAPI as never),
        "text/event-stream",
      );
    },
  };
}
