// The console: the sign-in form until there is a session, then the views, routed by URL (the
// history API: `/` and `/console/...`, which the service answers with this page).
import { Provider } from "@urql/preact";
import { LocationProvider, Route, Router } from "preact-iso";
import { useEffect, useMemo } from "preact/hooks";
import { createApiClient } from "./api-client.ts";
import { Layout } from "./components/layout.tsx";
import { createLiveConnection, LiveContext } from "./live.ts";
import { keepRenewed } from "./oidc/renewal.ts";
import { providerSettings } from "./oidc/provider.ts";
import { currentToken, onRenewal, providerSession, signOut, useSession } from "./session.ts";
import { ApplicationView } from "./views/application/application-view.tsx";
import { NotFoundView } from "./views/not-found-view.tsx";
import { PortfolioView } from "./views/portfolio/portfolio-view.tsx";
import { RemediationView } from "./views/remediation/remediation-view.tsx";
import { SignInView } from "./views/sign-in/sign-in-view.tsx";
import { WebhookView } from "./views/webhooks/webhook-view.tsx";
import { WebhooksView } from "./views/webhooks/webhooks-view.tsx";

function SignedIn() {
  const client = useMemo(() => createApiClient(), []);
  const live = useMemo(() => createLiveConnection(currentToken, signOut), []);
  useEffect(() => () => live.dispose(), [live]);
  useEffect(() => onRenewal(() => live.renew()), [live]);
  useEffect(() => {
    const provider = providerSettings();
    if (provider && providerSession()) return keepRenewed(provider);
  }, []);
  return (
    <Provider value={client}>
      <LiveContext.Provider value={live}>
        <Layout>
          <Router>
            <Route path="/" component={PortfolioView} />
            <Route path="/console/applications/:id" component={ApplicationView} />
            <Route path="/console/remediation" component={RemediationView} />
            <Route path="/console/webhooks" component={WebhooksView} />
            <Route path="/console/webhooks/:id" component={WebhookView} />
            <Route default component={NotFoundView} />
          </Router>
        </Layout>
      </LiveContext.Provider>
    </Provider>
  );
}

export function App() {
  const session = useSession();
  return (
    <LocationProvider>
      {session.token ? <SignedIn key={session.id} /> : <SignInView session={session} />}
    </LocationProvider>
  );
}
