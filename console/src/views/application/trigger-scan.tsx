import { useMutation } from "@urql/preact";
import { useState } from "preact/hooks";
import { fromCombinedError } from "../../api-error.ts";
import { FormOutcome } from "../../components/form-outcome.tsx";
import { graphql } from "../../graphql.ts";
import styles from "./forms.module.css";

const TriggerScanMutation = graphql(`
  mutation TriggerScan($applicationId: ID!, $scanType: ScanType!) {
    triggerScan(applicationId: $applicationId, input: { scanType: $scanType, triggeredBy: "console" }) {
      id
      scanType
      status
    }
  }
`);

const TYPES = ["SAST", "DAST", "SCA", "CONTAINER"] as const;

export function TriggerScan({ applicationId }: { applicationId: string }) {
  const [scanType, setScanType] = useState<(typeof TYPES)[number]>("SAST");
  const [state, trigger] = useMutation(TriggerScanMutation);
  const [done, setDone] = useState<string | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setDone(null);
    const result = await trigger({ applicationId, scanType });
    if (result.data) setDone(`A ${result.data.triggerScan.scanType.toLowerCase()} scan is queued.`);
  };
  return (
    <form class={styles.form} onSubmit={submit} aria-labelledby="trigger-heading">
      <h3 id="trigger-heading">Trigger a scan</h3>
      <div class={styles.row}>
        <label for="scan-type">Scan type</label>
        <select
          id="scan-type"
          value={scanType}
          onChange={(e) => setScanType(e.currentTarget.value as (typeof TYPES)[number])}
        >
          {TYPES.map((t) => (
            <option key={t} value={t}>
              {t.toLowerCase()}
            </option>
          ))}
        </select>
        <button type="submit" class="primary" disabled={state.fetching}>
          Trigger scan
        </button>
      </div>
      <FormOutcome error={state.error && fromCombinedError(state.error)}>{done}</FormOutcome>
    </form>
  );
}
