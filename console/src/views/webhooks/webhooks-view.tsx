import { fromCombinedError } from "../../api-error.ts";
import { Badge } from "../../components/badges.tsx";
import { ErrorNotice } from "../../components/error-notice.tsx";
import { Empty, Loading } from "../../components/states.tsx";
import { DataTable } from "../../components/data-table.tsx";
import { Time } from "../../components/time.tsx";
import { useWebhooks } from "./use-webhooks.ts";

export const eventName = (type: string) => type.toLowerCase().replace("_", ".");

export function WebhooksView() {
  const result = useWebhooks();
  return (
    <>
      <h1 tabIndex={-1}>Webhooks</h1>
      {result.error && <ErrorNotice error={fromCombinedError(result.error)} />}
      {!result.data ? (
        !result.error && <Loading what="webhook subscriptions" />
      ) : result.data.webhooks.totalCount === 0 ? (
        <Empty>No webhook subscriptions. Create one with POST /webhooks or the createWebhook mutation.</Empty>
      ) : (
        <DataTable
          label="Webhook subscriptions"
          caption="Subscriptions"
          columns={["Name", "URL", "Events", "Status", "Created"]}
        >
          {result.data.webhooks.edges.map(({ node: w }) => (
            <tr key={w.id}>
              <th scope="row">
                <a href={`/console/webhooks/${w.id}`}>{w.name}</a>
              </th>
              <td>
                <code>{w.url}</code>
              </td>
              <td>{w.events.map(eventName).join(", ")}</td>
              <td>
                <Badge kind="status" value={w.status} />
              </td>
              <td>
                <Time value={w.createdAt} />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </>
  );
}
