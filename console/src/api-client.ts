// The urql client of a session: queries and mutations over HTTP POST to /graphql with the
// session's current token (renewals replace it). A 401 ends the session. Subscriptions go through live.ts.
import { cacheExchange, Client, fetchExchange, mapExchange } from "@urql/core";
import { fromCombinedError } from "./api-error.ts";
import { currentToken, signOut } from "./session.ts";

export function createApiClient(): Client {
  return new Client({
    url: "/graphql",
    preferGetMethod: false,
    requestPolicy: "cache-and-network",
    fetchOptions: () => ({ headers: { authorization: `Bearer ${currentToken()}` } }),
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
