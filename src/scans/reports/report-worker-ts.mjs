// The report worker when the service runs from its TypeScript sources (npm run dev, jest): worker
// threads do not inherit the main thread's loader, so this one registers tsx first. The compiled
// service (dist/) runs report-worker.js directly.
import { register } from "tsx/esm/api";

register();
const worker = await import(new URL("./report-worker.ts", import.meta.url).href);
export default worker.default;
export const applyVexTask = worker.applyVexTask;
