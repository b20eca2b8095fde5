// The session: the bearer token the person signed in with, kept in sessionStorage (this tab only,
// gone when it closes, never localStorage nor a cookie: CONTRACT §18), and why the last session
// ended (shown on the sign-in page). Signed in through the identity provider, the session also
// holds what renews its token (the refresh token, when the token expires) and what ends it at the
// provider (the ID token). A renewal replaces the token within the same session: views stay, calls
// read the current token when they are made.
import { useEffect, useState } from "preact/hooks";

const KEY = "appsec.console.token";
const PROVIDER_KEY = "appsec.console.provider-session";
const FRAGMENT = /^#token=([^&]+)$/;

/** What the provider gave besides the access token. */
export interface ProviderSession {
  refreshToken?: string;
  /** Milliseconds since the epoch; unknown when the provider did not say (`expires_in`). */
  expiresAt?: number;
  /** When to renew it (before it expires, so a slow or briefly unreachable provider still has time). */
  renewAt?: number;
  idToken?: string;
}

export interface Session {
  token: string | null;
  /** Changes on every sign-in, not on renewals (views are keyed by it). */
  id: number;
  /** Why the previous session ended (a 401, a refused socket, a failed renewal), for the sign-in page. */
  endedBecause?: string;
  /** Why the last sign-in did not complete: a sentence for the sign-in page. */
  failedBecause?: string;
  /** The provider's answer is being checked and exchanged (the callback page). */
  completing: boolean;
}

let completing = false;
let endedBecause: string | undefined;
let failedBecause: string | undefined;
let id = 0;
const listeners = new Set<() => void>();
const renewalListeners = new Set<() => void>();
const emit = () => listeners.forEach((listener) => listener());

const current = (): Session => ({
  token: sessionStorage.getItem(KEY),
  id,
  endedBecause,
  failedBecause,
  completing,
});

/** The token to send now (it changes when the session is renewed). */
export const currentToken = (): string | null => sessionStorage.getItem(KEY);

export function providerSession(): ProviderSession | null {
  const stored = sessionStorage.getItem(PROVIDER_KEY);
  return stored ? (JSON.parse(stored) as ProviderSession) : null;
}

export function signIn(token: string, provider?: ProviderSession) {
  sessionStorage.setItem(KEY, token);
  if (provider) sessionStorage.setItem(PROVIDER_KEY, JSON.stringify(provider));
  else sessionStorage.removeItem(PROVIDER_KEY);
  endedBecause = undefined;
  failedBecause = undefined;
  completing = false;
  id += 1;
  emit();
}

/** The provider renewed the token: the same session goes on with it. */
export function renew(token: string, provider: ProviderSession) {
  if (currentToken() === null) return;
  sessionStorage.setItem(KEY, token);
  sessionStorage.setItem(PROVIDER_KEY, JSON.stringify(provider));
  renewalListeners.forEach((listener) => listener());
}

/** Runs `listener` after each renewal (the live connection reconnects with the new token). */
export function onRenewal(listener: () => void): () => void {
  renewalListeners.add(listener);
  return () => void renewalListeners.delete(listener);
}

/** Ends the session (sign-out, or the service refused the token: `reason` says so on the sign-in page). */
export function signOut(reason?: string) {
  if (sessionStorage.getItem(KEY) === null) return;
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(PROVIDER_KEY);
  endedBecause = reason;
  failedBecause = undefined;
  emit();
}

/** The provider's answer arrived: the page says "Signing in…" until it is checked. */
export function startCompleting() {
  completing = true;
  emit();
}

/** A sign-in that did not complete (refused at the provider, say): no session, and why, on the sign-in page. */
export function signInFailed(reason: string) {
  completing = false;
  endedBecause = undefined;
  failedBecause = reason;
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
