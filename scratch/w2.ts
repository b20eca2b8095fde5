import { readReportOffThread, closeReportReaders } from "../src/scans/reports/read-report-off-thread.ts";
const docs = ["{", '{"hello":"world"}', '{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x\\udfff"}}}]}', '{"version":"2.1.0","runs":' + "[".repeat(10000) + "]".repeat(10000) + "}"];
for (let round = 0; round < 3; round++) for (const d of docs) {
  try {
    const r = await readReportOffThread(Buffer.from(d), undefined);
    console.log(round, JSON.stringify(r).slice(0, 150));
    if (r.ok) r.close();
  } catch (e) { console.log(round, "ERR", e); }
}
await closeReportReaders();
