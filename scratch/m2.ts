import { sarifResults } from "../src/scans/reports/sarif-results-stream.ts";
const log = { version: "2.1.0", runs: [{ tool: { driver: { name: "A" } }, results: [{ message: { text: "a" } }], after: 1 }] };
const it = sarifResults(Buffer.from(JSON.stringify(log)));
let s = it.next(); for (; !s.done; s = it.next()) console.log("result", JSON.stringify(s.value));
console.log("outline", JSON.stringify(s.value));
