// Preloaded into the service by the vex suite (`node --import`, which its worker threads inherit):
// counts the SQL statements every pg client of every thread sends, and writes the count to stderr
// on SIGUSR2, so the suite can count what one VEX takes from outside the process. A worker thread
// (a VEX is applied in one) tells the main thread of each statement, which alone gets the signal.
// Bench only: nothing in the service knows of it.
import { isMainThread } from "node:worker_threads";
import pg from "pg";

const channel = new BroadcastChannel("bench-count-statements");
let statements = 0;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (...args) {
  if (isMainThread) statements++;
  else channel.postMessage(1);
  return query.apply(this, args);
};
if (isMainThread) {
  channel.onmessage = () => statements++;
  process.on("SIGUSR2", () => process.stderr.write(`statements=${statements}\n`));
}
channel.unref();
