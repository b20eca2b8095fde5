import { useState } from "preact/hooks";
import { ProviderUnreachable, type ProviderSettings } from "../../oidc/provider.ts";
import { beginSignIn } from "../../oidc/sign-in-flow.ts";
import styles from "./sign-in-view.module.css";

/** The button that sends the person to the identity provider (CONTRACT §18). */
export function ProviderSignIn({ provider }: { provider: ProviderSettings }) {
  const [busy, setBusy] = useState(false);
  const [unreachable, setUnreachable] = useState<string | null>(null);
  const start = async () => {
    setBusy(true);
    setUnreachable(null);
    try {
      await beginSignIn(provider);
    } catch (err) {
      setBusy(false);
      if (!(err instanceof ProviderUnreachable)) throw err;
      setUnreachable(
        `${provider.providerName} could not be reached, so the sign-in could not start. Try again in a moment; if it persists, the identity provider may be down.`,
      );
    }
  };
  return (
    <div class={styles.form}>
      {unreachable && (
        <p role="alert" class={styles.ended}>
          {unreachable}
        </p>
      )}
      <button type="button" class="primary" disabled={busy} onClick={() => void start()}>
        {busy ? `Going to ${provider.providerName}…` : `Sign in with ${provider.providerName}`}
      </button>
      <p class={styles.help}>
        You sign in on {provider.providerName}'s page; the console then keeps its tokens in this browser tab only, until
        you sign out or close it.
      </p>
    </div>
  );
}
