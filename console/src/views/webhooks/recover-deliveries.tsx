import { useState } from "preact/hooks";
import { fromCombinedError } from "../../api-error.ts";
import { FormOutcome } from "../../components/form-outcome.tsx";
import { useRecover } from "./use-webhooks.ts";
import styles from "./webhook-view.module.css";

/** A timestamp as a datetime-local input shows it: local time, to the minute (rounded down). */
function localMinute(iso: string): string {
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/**
 * Recover: the events since a moment whose deliveries to this subscription failed or were dropped
 * are sent again as new deliveries (recoverWebhookDeliveries); says how many were queued.
 */
export function RecoverDeliveries({
  webhookId,
  createdAt,
  onRecovered,
}: {
  webhookId: string;
  createdAt: string;
  onRecovered: () => void;
}) {
  const [since, setSince] = useState(() => localMinute(createdAt));
  const [state, recover] = useRecover();
  const [done, setDone] = useState<string | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setDone(null);
    const from = new Date(since);
    const result = await recover({ webhookId, since: from.toISOString() });
    if (!result.data) return;
    const n = result.data.recoverWebhookDeliveries.deliveries;
    const when = from.toLocaleString();
    setDone(
      n === 0
        ? `Nothing to recover: no event since ${when} has a failed or dropped delivery still unsent.`
        : `Recovered: ${n} ${n === 1 ? "delivery" : "deliveries"} of events since ${when} queued again as new deliveries.`,
    );
    onRecovered();
  };
  return (
    <form class={styles.recover} onSubmit={submit} aria-labelledby="recover-heading">
      <h3 id="recover-heading">Recover failed and dropped deliveries</h3>
      <p class={styles.hint}>
        Once the endpoint works again: sends again, as new deliveries, every event since this moment whose delivery
        failed or was dropped.
      </p>
      <div class={styles.row}>
        <label for="recover-since">Since</label>
        <input
          id="recover-since"
          type="datetime-local"
          required
          value={since}
          onInput={(e) => setSince(e.currentTarget.value)}
        />
        <button type="submit" class="primary" disabled={state.fetching || !since}>
          Recover
        </button>
      </div>
      <FormOutcome error={state.error && fromCombinedError(state.error)}>{done}</FormOutcome>
    </form>
  );
}
