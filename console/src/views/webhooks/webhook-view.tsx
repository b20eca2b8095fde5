import { useState } from "preact/hooks";
import { fromCombinedError } from "../../api-error.ts";
import { Badge } from "../../components/badges.tsx";
import { ErrorNotice } from "../../components/error-notice.tsx";
import { Empty, Loading } from "../../components/states.tsx";
import { DataTable } from "../../components/data-table.tsx";
import { Time } from "../../components/time.tsx";
import { useRedeliver, useWebhookDeliveries, type WebhookDelivery } from "./use-webhooks.ts";
import { eventName } from "./webhooks-view.tsx";
import { RecoverDeliveries } from "./recover-deliveries.tsx";
import styles from "./webhook-view.module.css";

const STEP = 20;

export function WebhookView({ id }: { id: string }) {
  const [first, setFirst] = useState(STEP);
  const { result, reload } = useWebhookDeliveries(id, first);
  const [redelivery, redeliver] = useRedeliver();
  const [done, setDone] = useState<string | null>(null);
  const webhook = result.data?.webhook;
  // Events with a delivery still pending: redelivering them is refused until it is sent or given up.
  const queued = new Set(
    webhook?.deliveries.edges.filter(({ node }) => node.status === "PENDING").map(({ node }) => node.eventId),
  );

  const again = async (delivery: WebhookDelivery) => {
    setDone(null);
    const answer = await redeliver({ webhookId: id, deliveryId: delivery.id });
    if (answer.data) {
      setDone(`Sent again as a new delivery of ${eventName(delivery.eventType)} (${delivery.eventId}).`);
      reload();
    }
  };

  return (
    <>
      <p class={styles.crumbs}>
        <a href="/console/webhooks">Webhooks</a> /
      </p>
      <h1 tabIndex={-1}>{webhook?.name ?? "Webhook subscription"}</h1>
      {result.error && <ErrorNotice error={fromCombinedError(result.error)} />}
      {!webhook ? (
        !result.error && <Loading what="the subscription" />
      ) : (
        <>
          <dl class={styles.facts}>
            <dt>URL</dt>
            <dd>
              <code>{webhook.url}</code>
            </dd>
            <dt>Events</dt>
            <dd>{webhook.events.map(eventName).join(", ")}</dd>
            <dt>Status</dt>
            <dd>
              <Badge kind="status" value={webhook.status} />
            </dd>
          </dl>
          <h2>Deliveries</h2>
          <RecoverDeliveries webhookId={id} createdAt={webhook.createdAt} onRecovered={reload} />
          <button type="button" class="secondary" onClick={reload}>
            Refresh deliveries
          </button>
          <p role="status">{done}</p>
          {redelivery.error && <ErrorNotice error={fromCombinedError(redelivery.error)} />}
          {webhook.deliveries.edges.length === 0 ? (
            <Empty>Nothing delivered yet: deliveries appear when an event this subscription lists happens.</Empty>
          ) : (
            <DataTable
              label="Deliveries"
              caption="Deliveries, newest first, with every attempt"
              columns={["Event", "Status", "Created", "Next attempt", "Attempts", "Action"]}
            >
              {webhook.deliveries.edges.map(({ node: d }) => (
                <tr key={d.id}>
                  <th scope="row">
                    {eventName(d.eventType)}
                    <div class={styles.id}>{d.eventId}</div>
                  </th>
                  <td>
                    <Badge kind="status" value={d.status} />
                    {d.waiting === "ENDPOINT_RECOVERY" && (
                      <span class={styles.waiting}>waiting: held back until the endpoint recovers</span>
                    )}
                  </td>
                  <td>
                    <Time value={d.createdAt} />
                  </td>
                  <td>
                    {d.waiting === "ENDPOINT_RECOVERY" ? (
                      "when the endpoint recovers"
                    ) : (
                      <Time value={d.nextAttemptAt} />
                    )}
                  </td>
                  <td>
                    {d.attempts.length === 0 ? (
                      "none yet"
                    ) : (
                      <ol
                        class={styles.attempts}
                        aria-label={`${d.attempts.length} ${d.attempts.length === 1 ? "attempt" : "attempts"}`}
                      >
                        {d.attempts.map((a) => (
                          <li key={a.attemptedAt}>
                            <Time value={a.attemptedAt} />: {a.statusCode ?? "no answer"} in {a.durationMs} ms
                            {a.error ? ` (${a.error})` : ""}
                          </li>
                        ))}
                      </ol>
                    )}
                  </td>
                  <td>
                    {queued.has(d.eventId) ? (
                      // The service refuses another copy (409) while one is pending.
                      <span class={styles.hint}>queued: a copy is pending</span>
                    ) : (
                      <button
                        type="button"
                        class="secondary"
                        disabled={redelivery.fetching}
                        onClick={() => again(d)}
                        aria-label={`Redeliver ${eventName(d.eventType)} ${d.eventId}`}
                      >
                        Redeliver
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
          {webhook.deliveries.pageInfo.hasNextPage && (
            <button type="button" class="secondary" onClick={() => setFirst((n) => n + STEP)}>
              Show more deliveries
            </button>
          )}
        </>
      )}
    </>
  );
}
