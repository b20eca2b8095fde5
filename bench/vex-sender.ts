// The caller that applies the VEX documents (bench/vex.ts), in a worker thread of its own: encoding
// and sending 2 MiB bodies makes garbage, and its collections (mark-compacts of 6–12 ms) must not
// pause the event loop that times the other callers. It builds both documents, posts their size in
// bytes; then, for each "not_affected" or "under_investigation" it is sent, POSTs that document and
// posts { start, end, status, body }, the times as epoch milliseconds (performance.timeOrigin based).
import { parentPort, workerData } from "node:worker_threads";

const { url, authorization, size } = workerData as { url: string; authorization: string; size: number };
type Status = "not_affected" | "under_investigation";

/** An OpenVEX document with one statement per vulnerability, about its package. */
function openVex(status: Status): Uint8Array<ArrayBuffer> {
  const statements = Array.from({ length: size }, (_, i) => ({
    vulnerability: { name: `CVE-2030-${100_000 + i}` },
    products: [{ "@id": `pkg:npm/package-${i}@1.0.0` }],
    status,
    ...(status === "not_affected" && {
      justification: "vulnerable_code_not_in_execute_path",
      impact_statement: "The vulnerable function is never called.",
    }),
  }));
  return new TextEncoder().encode(
    JSON.stringify({
      "@context": "https://openvex.dev/ns/v0.2.0",
      "@id": `urn:uuid:${crypto.randomUUID()}`,
      author: "bench",
      timestamp: new Date().toISOString(),
      version: 1,
      statements,
    }),
  );
}

const documents: Record<Status, Uint8Array<ArrayBuffer>> = {
  not_affected: openVex("not_affected"),
  under_investigation: openVex("under_investigation"),
};
const now = () => performance.timeOrigin + performance.now();

parentPort!.on("message", async (status: Status) => {
  const start = now();
  const res = await fetch(url, {
    method: "POST",
    headers: { authorization, "content-type": "application/json" },
    body: documents[status],
  });
  const body: unknown = await res.json();
  parentPort!.postMessage({ start, end: now(), status: res.status, body });
});
parentPort!.postMessage(documents.not_affected.byteLength);
