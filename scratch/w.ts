import { MessageChannel } from "node:worker_threads";
import task from "../src/scans/reports/report-worker.ts";
for (const text of ['{"hello":"world"}', '{"version":"2.1.0","runs":' + "[".repeat(100) + "]".repeat(100) + "}", "{"]) {
  const { port1, port2 } = new MessageChannel();
  port1.on("message", (m) => { console.log(JSON.stringify(m).slice(0, 300)); port1.close(); });
  await task({ bytes: Buffer.from(text), port: port2 }).catch((e) => console.log("ERR", e));
}
