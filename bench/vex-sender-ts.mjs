// Worker threads do not inherit the main thread's TypeScript loader: this registers tsx first.
import { register } from "tsx/esm/api";

register();
await import(new URL("./vex-sender.ts", import.meta.url).href);
