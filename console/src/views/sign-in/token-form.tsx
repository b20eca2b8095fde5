import { useState } from "preact/hooks";
import { fromProblem, type ApiError } from "../../api-error.ts";
import { ErrorNotice } from "../../components/error-notice.tsx";
import { signIn } from "../../session.ts";
import styles from "./sign-in-view.module.css";

/** Asks the service whether it takes the token before keeping it. */
async function check(token: string): Promise<ApiError | null> {
  try {
    const response = await fetch("/graphql", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ query: "{ __typename }" }),
    });
    if (response.ok) return null;
    const body = (await response.json().catch(() => ({}))) as { errors?: { message: string }[] };
    return fromProblem(
      { title: response.status === 401 ? "Unauthorized" : undefined, detail: body.errors?.[0]?.message },
      response.status,
    );
  } catch (err) {
    return { title: "The service could not be reached", detail: (err as Error).message };
  }
}

/** The token form (CONTRACT §16): a pasted access token, checked with the service before it is kept. */
export function TokenForm() {
  const [token, setToken] = useState("");
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const value = token.trim().replace(/^Bearer\s+/i, "");
    if (!value) return setError({ title: "A token is needed", detail: "Paste an access token (a JWT) to sign in." });
    setBusy(true);
    const refused = await check(value);
    setBusy(false);
    if (refused) setError(refused);
    else signIn(value);
  };
  return (
    <form onSubmit={submit} class={styles.form}>
      <label for="token">Access token</label>
      <textarea
        id="token"
        name="token"
        rows={4}
        spellcheck={false}
        autocomplete="off"
        aria-describedby="token-help"
        value={token}
        onInput={(e) => setToken(e.currentTarget.value)}
      />
      <p id="token-help" class={styles.help}>
        A bearer token from your identity provider, or from <code>npm run token -- --scope admin</code>. It is kept in
        this browser tab only, until you sign out or close it.
      </p>
      {error && <ErrorNotice error={error} />}
      <button type="submit" class="primary" disabled={busy}>
        {busy ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
}
