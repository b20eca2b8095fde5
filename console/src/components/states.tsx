import type { ComponentChildren } from "preact";
import styles from "./states.module.css";

export function Loading({ what }: { what: string }) {
  return (
    <p role="status" class={styles.state}>
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class={styles.state}>{children}</p>;
}
