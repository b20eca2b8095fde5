// What the generators produce: a request for an HTTP client (kind rest or graphql), or raw bytes for a
// socket. Each says what it is in one line, which is what fast-check prints for a counterexample.
import fc from "fast-check";

export interface HttpFuzzRequest {
  kind: "rest" | "graphql";
  method: string;
  /** Already encoded; may hold bytes 0x80–0xFF as latin1 characters (sent as those bytes). */
  path: string;
  /** Pairs, so a header may repeat. */
  headers: [string, string][];
  body?: Buffer;
}

export interface RawFuzzRequest {
  kind: "raw";
  bytes: Buffer;
}

export type FuzzRequest = HttpFuzzRequest | RawFuzzRequest;

const printable = (text: string, max: number) =>
  JSON.stringify(text.length > max ? `${text.slice(0, max)}…(${text.length} chars)` : text);

/** One line; `scale` lengthens what is shown of each part (the cause of a failure is shown whole). */
export function describeRequest(request: FuzzRequest, scale = 1): string {
  if (request.kind === "raw") return `raw ${printable(request.bytes.toString("latin1"), 300 * scale)}`;
  const headers = request.headers.map(([name, value]) => `${name}: ${printable(value, 60 * scale)}`).join(", ");
  const body = request.body ? ` body ${printable(request.body.toString("latin1"), 200 * scale)}` : "";
  return `${request.kind} ${request.method} ${printable(request.path, 200 * scale)} [${headers}]${body}`;
}

/** Makes fast-check print the one-line description instead of the object (and its Buffers). */
export function withDescription<T extends FuzzRequest>(request: T): T {
  return Object.defineProperty(request, fc.toStringMethod, {
    value: () => describeRequest(request),
    enumerable: false,
  });
}
