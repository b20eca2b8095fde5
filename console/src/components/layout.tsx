import type { ComponentChildren } from "preact";
import { useLocation } from "preact-iso";
import { useEffect, useRef } from "preact/hooks";
import { useLiveStatus } from "../live.ts";
import { CatchUpNotice } from "./catch-up-notice.tsx";
import { signOutOfSession } from "../oidc/sign-out.ts";
import styles from "./layout.module.css";
import { WhoseView } from "./whose-view.tsx";

const LIVE_WORDS = { connecting: "Connecting…", live: "Live", reconnecting: "Reconnecting…" };

export function Layout({ children }: { children: ComponentChildren }) {
  const { path } = useLocation();
  const status = useLiveStatus();
  const first = useRef(true);
  // After navigating, focus moves to the new view's heading, as a page load would put it at the top.
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    document.querySelector<HTMLElement>("main h1")?.focus();
  }, [path]);
  const current = (href: string) =>
    href === "/" ? path === "/" || path.startsWith("/console/applications") : path.startsWith(href);
  return (
    <>
      <a class={styles.skip} href="#main">
        Skip to content
      </a>
      <header class={styles.header}>
        <a class={styles.brand} href="/">
          AppSec console
        </a>
        <nav aria-label="Main" class={styles.nav}>
          <a href="/" aria-current={current("/") ? "page" : undefined}>
            Portfolio
          </a>
          <a href="/console/remediation" aria-current={current("/console/remediation") ? "page" : undefined}>
            Remediation
          </a>
          <a href="/console/webhooks" aria-current={current("/console/webhooks") ? "page" : undefined}>
            Webhooks
          </a>
        </nav>
        <WhoseView />
        <span role="status" class={`${styles.live} ${styles[status]}`}>
          {LIVE_WORDS[status]}
        </span>
        <button type="button" class={styles.signOut} onClick={signOutOfSession}>
          Sign out
        </button>
      </header>
      <main id="main" class={styles.main}>
        <CatchUpNotice />
        {children}
      </main>
    </>
  );
}
