// One file sent to the REST API, chosen with the file picker or dropped on the box: what the
// report and VEX uploads share. `send` makes the request; what it answers is shown by `result`,
// and a refusal as the API's problem details.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import type { ApiError } from "../../api-error.ts";
import { FormOutcome } from "../../components/form-outcome.tsx";
import { ApiRequestError } from "../../rest.ts";
import { currentToken } from "../../session.ts";
import styles from "./forms.module.css";

/** The request headers for a file: `typeOf` names its content type from its name (less `.gz`); gzip is sent as such. */
export function uploadHeaders(file: File, typeOf: (name: string) => string): Record<string, string> {
  const name = file.name.toLowerCase();
  const gzip = name.endsWith(".gz");
  return { "content-type": typeOf(gzip ? name.slice(0, -3) : name), ...(gzip && { "content-encoding": "gzip" }) };
}

export interface FileUploadFormProps<R> {
  /** Prefix of the form's element ids. */
  id: string;
  heading: string;
  label: string;
  accept: string;
  hint: string;
  submit: string;
  submitting: string;
  /** The problem shown when nothing was chosen. */
  nothingChosen: ApiError;
  send: (file: File, token: string) => Promise<R>;
  result: (answer: R) => ComponentChildren;
}

export function FileUploadForm<R>(props: FileUploadFormProps<R>) {
  const [file, setFile] = useState<File | null>(null);
  const [dragging, setDragging] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const [answer, setAnswer] = useState<{ value: R } | null>(null);

  const upload = async (event: Event) => {
    event.preventDefault();
    const token = currentToken();
    if (!file || !token) return setError(props.nothingChosen);
    setBusy(true);
    setError(null);
    setAnswer(null);
    try {
      setAnswer({ value: await props.send(file, token) });
    } catch (err) {
      setError(
        err instanceof ApiRequestError ? err.apiError : { title: "The upload failed", detail: (err as Error).message },
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class={styles.form} onSubmit={upload} aria-labelledby={`${props.id}-heading`}>
      <h3 id={`${props.id}-heading`}>{props.heading}</h3>
      <div
        class={`${styles.drop} ${dragging ? styles.dragging : ""}`}
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(e) => {
          e.preventDefault();
          setDragging(false);
          const dropped = e.dataTransfer?.files[0];
          if (dropped) setFile(dropped);
        }}
      >
        <label for={`${props.id}-file`}>{props.label}</label>
        <input
          id={`${props.id}-file`}
          type="file"
          accept={props.accept}
          onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
        />
        <p class={styles.hint}>
          {props.hint}
          {file ? ` Chosen: ${file.name}.` : ""}
        </p>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? props.submitting : props.submit}
        </button>
      </div>
      <FormOutcome error={error}>{answer && props.result(answer.value)}</FormOutcome>
    </form>
  );
}
