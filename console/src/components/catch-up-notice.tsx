import { useLocation } from "preact-iso";
import { useEffect, useState } from "preact/hooks";
import { useCatchUp, type CatchUp } from "../live.ts";
import styles from "./catch-up-notice.module.css";

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

function say({ changes, refetched }: CatchUp): string {
  const caught = `caught up on ${plural(changes, "change", "changes")} from while the connection was down`;
  if (refetched === 0)
    return changes === 0 ? "Reconnected: nothing this page follows changed meanwhile." : `Reconnected: ${caught}.`;
  return changes === 0
    ? "Reconnected: this page's data was reloaded (what happened meanwhile could not be replayed)."
    : `Reconnected: ${caught}, and reloaded the rest.`;
}

/**
 * After the live connection came back: what its catch-up brought, said once in a polite live region
 * (the region is always there, so screen readers announce the text when it appears).
 */
export function CatchUpNotice() {
  const catchUp = useCatchUp();
  const { path } = useLocation();
  const [dismissed, setDismissed] = useState<CatchUp | null>(null);
  useEffect(() => setDismissed(null), [catchUp === null]);
  // It speaks of the page it happened on: leaving that page dismisses it.
  useEffect(() => setDismissed(catchUp), [path]);
  // Views without subscriptions refetch on reconnection (useReconnect): nothing to say for them.
  const shown = catchUp?.settled && catchUp.subscriptions > 0 && catchUp !== dismissed ? catchUp : null;
  return (
    <div role="status" class={shown ? styles.notice : undefined}>
      {shown && (
        <>
          <span>{say(shown)}</span>
          <button
            type="button"
            class="secondary"
            onClick={() => setDismissed(shown)}
            aria-label="Dismiss the reconnection notice"
          >
            Dismiss
          </button>
        </>
      )}
    </div>
  );
}
