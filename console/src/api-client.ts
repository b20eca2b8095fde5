// The urql client of a session: queries and mutations over HTTP POST to /graphql with the
// session's token. A 401 ends the session. Subscriptions go through live.ts.
import { cacheExchange, Client, fetchExchange, mapExchange } from "@urql/core";
import { fromCombinedError } from "./api-error.ts";
import { signOut } from "./session.ts";

export function createApiClient(token: string): Client {
  return new Client({
    url: "/graphql",
    preferGetMethod: false,
    requestPolicy: "cache-and-network",
    fetchOptions: () => ({ headers: { authorization: `Bearer ${token}` } }),
    exchanges: [
      mapExchange({
        onError(error) {
          if (error.response?.status === 401) {
            const { detail, title } = fromCombinedError(error);
            signOut(detail ?? title);
          }
        },
      }),
      cacheExchange,
      fetchExchange,
    ],
  });
}
