// A worker thread that holds the bulk turns it is given (workerData, a BulkTurns buffer) from when
// it says "holding" until it is told "release" (test/unit/bulk-turns.test.ts).
import { once } from "node:events";
import { parentPort, workerData } from "node:worker_threads";
import { BulkTurns } from "../../src/db/bulk-turns.ts";

const port = parentPort!;
await new BulkTurns(workerData as SharedArrayBuffer).take(async () => {
  port.postMessage("holding");
  await once(port, "message");
});
port.postMessage("released");
