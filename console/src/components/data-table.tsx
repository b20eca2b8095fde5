import type { ComponentChildren } from "preact";
import styles from "./data-table.module.css";

interface DataTableProps {
  /** Names the scrollable region (and the table, when there is no caption). */
  label: string;
  caption?: string;
  columns: readonly string[];
  /** The rows (`<tr>`s) of the body. */
  children: ComponentChildren;
}

/**
 * A table that scrolls sideways inside its own box on a narrow screen, so the page never does.
 * The box is focusable, so it can be scrolled from the keyboard, and named.
 */
export function DataTable({ label, caption, columns, children }: DataTableProps) {
  return (
    <div class={styles.region} role="region" aria-label={label} tabIndex={0}>
      <table aria-label={caption ? undefined : label}>
        {caption && <caption>{caption}</caption>}
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
