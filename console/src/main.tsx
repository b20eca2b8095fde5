import { render } from "preact";
import { App } from "./app.tsx";
import { providerSettings } from "./oidc/provider.ts";
import { CALLBACK_PATH, completeSignIn } from "./oidc/sign-in-flow.ts";
import { adoptTokenFromFragment } from "./session.ts";
import "./global.css";

adoptTokenFromFragment();
const provider = providerSettings();
if (provider && location.pathname === CALLBACK_PATH) void completeSignIn(provider);
render(<App />, document.getElementById("app")!);
