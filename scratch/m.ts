import { readReportBytes } from "../src/scans/reports/read-report-bytes.ts";
const log = { version: "2.1.0", runs: [
  { tool: { driver: { name: "A" } }, results: [{ message: { text: "a" }, locations: [{ physicalLocation: { artifactLocation: { uri: "x.js" }, region: { startLine: 1 } } }] }], versionControlProvenance: [{ repositoryUri: "https://g.test/a", revisionId: "abc" }] },
  { tool: { driver: { name: "A" } }, results: [{ message: { text: "b" }, locations: [{ physicalLocation: { artifactLocation: { uri: "y.js" }, region: { startLine: 1 } } }] }] }] };
const r = readReportBytes(Buffer.from(JSON.stringify(log)), undefined);
console.log([...{ [Symbol.iterator]: () => r.batches() }].flat().map((f) => f.introducedIn));
