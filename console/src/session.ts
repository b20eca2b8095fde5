// The session: the bearer token the person signed in with, kept in sessionStorage (this tab only,
// gone when it closes), and why the last session ended (shown on the sign-in form).
import { useEffect, useState } from "preact/hooks";

const KEY = "appsec.console.token";
const FRAGMENT = /^#token=([^&]+)$/;

export interface Session {
  token: string | null;
  /** Why the previous session ended (a 401, a refused socket), for the sign-in form. */
  endedBecause?: string;
}

let endedBecause: string | undefined;
const listeners = new Set<() => void>();
const emit = () => listeners.forEach((listener) => listener());

const current = (): Session => ({ token: sessionStorage.getItem(KEY), endedBecause });

export function signIn(token: string) {
  sessionStorage.setItem(KEY, token);
  endedBecause = undefined;
  emit();
}

/** Ends the session (sign-out, or the service refused the token: `reason` says so on the form). */
export function signOut(reason?: string) {
  if (sessionStorage.getItem(KEY) === null) return;
  sessionStorage.removeItem(KEY);
  endedBecause = reason;
  emit();
}

/**
 * The development sign-in link (`/#token=…`, printed by `npm start`): the fragment never reaches
 * the server; the page takes the token from it and removes it from the address bar and history.
 */
export function adoptTokenFromFragment() {
  const match = FRAGMENT.exec(location.hash);
  if (!match) return;
  history.replaceState(history.state, "", location.pathname + location.search);
  signIn(decodeURIComponent(match[1]!));
}

export function useSession(): Session {
  const [session, setSession] = useState(current);
  useEffect(() => {
    const update = () => setSession(current());
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return session;
}
