import { providerSettings } from "../../oidc/provider.ts";
import type { Session } from "../../session.ts";
import { ProviderSignIn } from "./provider-sign-in.tsx";
import styles from "./sign-in-view.module.css";
import { TokenForm } from "./token-form.tsx";

/**
 * The sign-in page: with the identity provider when the service names one (CONTRACT §18), else
 * the token form (§16), which stays available under the provider's button. Says why the last
 * session ended or the last sign-in failed.
 */
export function SignInView({ session }: { session: Session }) {
  const provider = providerSettings();
  if (session.completing)
    return (
      <main id="main" class={styles.page}>
        <h1>Sign in to the AppSec console</h1>
        <p role="status">Signing in with {provider?.providerName}…</p>
      </main>
    );
  return (
    <main id="main" class={styles.page}>
      <h1>Sign in to the AppSec console</h1>
      {session.failedBecause && (
        <div role="alert" class={styles.ended}>
          <p>{session.failedBecause}</p>
        </div>
      )}
      {session.endedBecause && (
        <div role="alert" class={styles.ended}>
          <p>Your session ended: {session.endedBecause}</p>
          <p>{provider ? "Sign in again to go on." : "Sign in again with a valid token."}</p>
        </div>
      )}
      {provider ? (
        <>
          <ProviderSignIn provider={provider} />
          <details class={styles.alternative}>
            <summary>Sign in with an access token instead</summary>
            <TokenForm />
          </details>
        </>
      ) : (
        <TokenForm />
      )}
    </main>
  );
}
