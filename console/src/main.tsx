import { render } from "preact";
import { App } from "./app.tsx";
import { adoptTokenFromFragment } from "./session.ts";
import "./global.css";

adoptTokenFromFragment();
render(<App />, document.getElementById("app")!);
