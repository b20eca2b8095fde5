import { useMutation, useQuery } from "@urql/preact";
import { graphql, type ResultOf } from "../../graphql.ts";
import { useReconnect } from "../../live.ts";

const Webhooks = graphql(`
  query Webhooks {
    webhooks(first: 500) {
      totalCount
      edges {
        node {
          id
          name
          url
          events
          status
          createdAt
        }
      }
    }
  }
`);

const WebhookDeliveries = graphql(`
  query WebhookDeliveries($id: ID!, $first: Int!) {
    webhook(id: $id) {
      id
      name
      url
      events
      status
      createdAt
      deliveries(first: $first) {
        pageInfo {
          hasNextPage
        }
        edges {
          node {
            id
            eventId
            eventType
            status
            createdAt
            nextAttemptAt
            waiting
            attempts {
              attemptedAt
              statusCode
              durationMs
              error
            }
          }
        }
      }
    }
  }
`);

const Redeliver = graphql(`
  mutation Redeliver($webhookId: ID!, $deliveryId: ID!) {
    redeliverWebhookDelivery(webhookId: $webhookId, deliveryId: $deliveryId) {
      id
      status
    }
  }
`);

const Recover = graphql(`
  mutation RecoverWebhookDeliveries($webhookId: ID!, $since: DateTime!) {
    recoverWebhookDeliveries(webhookId: $webhookId, since: $since) {
      deliveries
    }
  }
`);

export type WebhookDelivery = ResultOf<typeof WebhookDeliveries>["webhook"]["deliveries"]["edges"][number]["node"];

export function useWebhooks() {
  const [result, refetch] = useQuery({ query: Webhooks });
  useReconnect(() => refetch({ requestPolicy: "network-only" }));
  return result;
}

export function useWebhookDeliveries(id: string, first: number) {
  const [result, refetch] = useQuery({ query: WebhookDeliveries, variables: { id, first } });
  const reload = () => refetch({ requestPolicy: "network-only" });
  useReconnect(reload);
  return { result, reload };
}

export function useRedeliver() {
  return useMutation(Redeliver);
}

export function useRecover() {
  return useMutation(Recover);
}
