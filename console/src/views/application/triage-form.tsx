// A vulnerability's triage from its row: accept it (not affected, why, and until when), mark it
// under investigation, or reopen it. Each is one OpenVEX statement sent through applyVex; what it
// did is announced under the form, a refusal as the API's error.
import { useEffect, useRef, useState } from "preact/hooks";
import { fromCombinedError } from "../../api-error.ts";
import { FormOutcome } from "../../components/form-outcome.tsx";
import { useViewer } from "../../viewer.ts";
import {
  JUSTIFICATIONS,
  triageDocument,
  vexName,
  type Justification,
  type TriagedVulnerability,
} from "./triage-document.ts";
import { useApplyTriage } from "./use-triage.ts";
import styles from "./triage-form.module.css";

const CHOICES = [
  { status: "not_affected", label: "Accept (not affected)" },
  { status: "under_investigation", label: "Under investigation" },
  { status: "affected", label: "Reopen" },
] as const;
type Status = (typeof CHOICES)[number]["status"];

const word = (value: string) => value.replace(/_/g, " ");

interface TriageFormProps {
  applicationId: string;
  vulnerability: TriagedVulnerability & { id: string; title: string };
  onApplied: () => void;
  onClose: () => void;
}

export function TriageForm({ applicationId, vulnerability: v, onApplied, onClose }: TriageFormProps) {
  const id = `triage-${v.id}`;
  const [status, setStatus] = useState<Status>("not_affected");
  const [justification, setJustification] = useState<Justification>("vulnerable_code_not_in_execute_path");
  const [detail, setDetail] = useState("");
  const [ends, setEnds] = useState("");
  const [state, apply] = useApplyTriage();
  const [done, setDone] = useState<string | null>(null);
  const first = useRef<HTMLInputElement>(null);
  // Opened from the row's Triage button: the form's first control takes the focus.
  useEffect(() => first.current?.focus(), []);
  const viewer = useViewer();
  const name = vexName(v);

  const submit = async (event: Event) => {
    event.preventDefault();
    setDone(null);
    const decision = status === "not_affected" ? { status, justification, detail } : { status, detail };
    const document = triageDocument(v, decision, `${viewer.data?.me.sub ?? "someone"} (AppSec console)`);
    const expiresAt = status === "not_affected" && ends ? new Date(ends).toISOString() : null;
    const result = await apply({ applicationId, document, expiresAt });
    if (!result.data) return;
    const { applied, unchanged, pending, errors } = result.data.applyVex;
    setDone(
      `Triage sent: ${applied} applied, ${unchanged} unchanged, ${pending} pending` +
        (errors.length ? `; refused: ${errors.map((e) => `${e.path}: ${e.message}`).join("; ")}.` : "."),
    );
    onApplied();
  };

  return (
    <form
      class={styles.form}
      onSubmit={submit}
      aria-label={`Triage of ${v.title}`}
      onKeyDown={(e) => {
        if (e.key === "Escape") onClose();
      }}
    >
      {!name && <p>This vulnerability has no id a VEX statement can name: it cannot be triaged here.</p>}
      <fieldset class={styles.choices}>
        <legend>Decision</legend>
        {CHOICES.map((c, i) => (
          <label key={c.status}>
            <input
              ref={i === 0 ? first : undefined}
              type="radio"
              name={`${id}-status`}
              value={c.status}
              checked={status === c.status}
              onChange={() => setStatus(c.status)}
            />
            {c.label}
          </label>
        ))}
      </fieldset>
      {status === "not_affected" && (
        <div class={styles.field}>
          <label for={`${id}-justification`}>Justification</label>
          <select
            id={`${id}-justification`}
            value={justification}
            onChange={(e) => setJustification(e.currentTarget.value as Justification)}
          >
            {JUSTIFICATIONS.map((j) => (
              <option key={j} value={j}>
                {word(j)}
              </option>
            ))}
          </select>
        </div>
      )}
      <div class={styles.field}>
        <label for={`${id}-detail`}>{status === "not_affected" ? "Why it does not affect us" : "Notes"}</label>
        <textarea
          id={`${id}-detail`}
          rows={2}
          required={status === "not_affected"}
          value={detail}
          onInput={(e) => setDetail(e.currentTarget.value)}
        />
      </div>
      {status === "not_affected" && (
        <div class={styles.field}>
          <label for={`${id}-ends`}>Accepted until (optional)</label>
          <input
            id={`${id}-ends`}
            type="datetime-local"
            step={1}
            value={ends}
            aria-describedby={`${id}-ends-hint`}
            onInput={(e) => setEnds(e.currentTarget.value)}
          />
          <p id={`${id}-ends-hint`} class={styles.hint}>
            Your local time. Then the vulnerability is open again and its remediation clock resumes.
          </p>
        </div>
      )}
      <div class={styles.buttons}>
        <button type="submit" class="primary" disabled={state.fetching || !name}>
          {state.fetching ? "Sending…" : "Apply triage"}
        </button>
        <button type="button" class="secondary" onClick={onClose}>
          Close
        </button>
      </div>
      <FormOutcome error={state.error && fromCombinedError(state.error)}>{done}</FormOutcome>
    </form>
  );
}
