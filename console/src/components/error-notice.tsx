import type { ApiError } from "../api-error.ts";
import styles from "./error-notice.module.css";

/** An error as the API stated it: its title, its detail and the fields it names. */
export function ErrorNotice({ error }: { error: ApiError }) {
  return (
    <div role="alert" class={styles.notice}>
      <p class={styles.title}>
        {error.title}
        {error.status ? ` (${error.status})` : ""}
      </p>
      {error.detail && <p>{error.detail}</p>}
      {error.fieldErrors && (
        <ul>
          {error.fieldErrors.map((f) => (
            <li key={f.path + f.message}>
              <code>{f.path || "(body)"}</code>: {f.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
