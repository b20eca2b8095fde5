// A worker thread that runs a TypeScript module of the bench (its URL the worker's first argv):
// worker threads do not inherit the main thread's TypeScript loader, so this registers tsx first.
import { register } from "tsx/esm/api";

register();
await import(process.argv[2]);
