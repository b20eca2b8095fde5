import type { ComponentChildren } from "preact";
import type { ApiError } from "../api-error.ts";
import { ErrorNotice } from "./error-notice.tsx";
import styles from "./form-outcome.module.css";

/**
 * What a form's last submission did, under the form: a polite status region (always there, so
 * screen readers announce what appears in it) and, when refused, the API's error.
 */
export function FormOutcome({ error, children }: { error: ApiError | null | undefined; children?: ComponentChildren }) {
  return (
    <>
      <div role="status" class={styles.status}>
        {children}
      </div>
      {error && <ErrorNotice error={error} />}
    </>
  );
}
