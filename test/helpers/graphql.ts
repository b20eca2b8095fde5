// GraphQL over real HTTP against a TestApp, and a real graphql-ws client.
import { createClient, type Client, type SubscribePayload } from "graphql-ws";
import WebSocket from "ws";
import type { TestApp, TestResponse } from "./test-app.ts";

export function gql(
  t: TestApp,
  query: string,
  variables?: Record<string, unknown>,
  options: { token?: string | null; headers?: Record<string, string> } = {},
): Promise<TestResponse> {
  return t.request("POST", "/graphql", { body: { query, variables }, token: options.token, headers: options.headers });
}

/** The error codes of a GraphQL response, in order. */
export const codesOf = (res: TestResponse): string[] =>
  (res.body?.errors ?? []).map((e: { extensions?: { code?: string } }) => e.extensions?.code);

/** A graphql-ws client of a service (a TestApp, or a service process). */
export function wsClient(
  t: { baseUrl: string },
  connectionParams: Record<string, unknown> | undefined,
  onClose?: (code: number) => void,
): Client {
  return createClient({
    url: t.baseUrl.replace(/^http/, "ws") + "/graphql",
    webSocketImpl: WebSocket,
    connectionParams,
    retryAttempts: 0,
    lazy: false,
    on: { closed: (event) => onClose?.((event as { code: number }).code) },
    onNonLazyError: () => {},
  });
}

/** What one subscription of `client` delivers (`pick` from each payload's data), and any error it ends with. */
export function collect<T>(
  client: Client,
  payload: SubscribePayload,
  pick: (data: any) => T,
): { received: T[]; errors: unknown[] } {
  const received: T[] = [];
  const errors: unknown[] = [];
  client.subscribe(payload, {
    next: ({ data }) => void received.push(pick(data)),
    error: (err) => void errors.push(err),
    complete: () => {},
  });
  return { received, errors };
}
