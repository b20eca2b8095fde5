import type { ComponentChildren } from "preact";
import styles from "./table-region.module.css";

/**
 * A table that scrolls sideways inside its own box on a narrow screen, so the page never does.
 * The box is focusable, so it can be scrolled from the keyboard, and named by the table's caption.
 */
export function TableRegion({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class={styles.region} role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
