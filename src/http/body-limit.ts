// A body over its limit is answered 413 in a way every client reads (docs/spec/CONTRACT.md §15). The client
// is most likely still sending when the limit is crossed: a server that answers and closes at
// once makes it fail writing (EPIPE, ECONNRESET) before it reads the answer, which is what Node's
// fetch does (curl happens to read it). So the rest is read and thrown away, up to twice the limit
// in all, for as long as it keeps coming, and only then does the 413 go out, with Connection: close.
import type { IncomingMessage } from "node:http";
import { httpProblem, type HttpProblem } from "./problem.ts";

/**
 * A client that sends nothing for this long is not waited for. An idle bound, not a total one: a
 * 60 MiB upload over a slow link (or on a busy machine) takes longer than any fixed total that
 * would still be short, and cut off mid-way it is the EPIPE this module exists to prevent.
 */
const DRAIN_IDLE_MS = 10_000;
/** Nor one that takes longer than this in all: 100 MiB, twice the largest limit, at 0.85 MiB/s. */
const DRAIN_MAX_MS = 120_000;

/** Counts a request's body bytes as they are read, by whatever reads them. */
export interface BodyMeter {
  readonly bytes: number;
}

export function meterBody(req: IncomingMessage): BodyMeter {
  const meter = { bytes: 0 };
  req.on("data", (chunk: Buffer) => (meter.bytes += chunk.length));
  return meter;
}

/** Reads and discards the rest of the body until `max` bytes were read in all, it ends, or it stalls. */
function drain(req: IncomingMessage, meter: BodyMeter, max: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(idle);
      clearTimeout(overall);
      req.off("data", check).off("end", done).off("close", done).off("error", done);
      req.pause();
      resolve();
    };
    const check = () => {
      if (meter.bytes >= max) done();
      else idle.refresh();
    };
    const idle = setTimeout(done, DRAIN_IDLE_MS);
    const overall = setTimeout(done, DRAIN_MAX_MS);
    req.on("data", check).on("end", done).on("close", done).on("error", done);
    // Whatever was reading it (a decompressor) has given up; the bytes now only need to go.
    req.unpipe();
    req.resume();
    check();
  });
}

/**
 * The 413 for a body over `limit` bytes, once what follows was drained. A body announced longer
 * than twice the limit is not waited for: the client cannot be spared an error then.
 */
export async function payloadTooLarge(
  req: IncomingMessage,
  meter: BodyMeter,
  limit: number,
  detail: string,
): Promise<HttpProblem> {
  const announced = Number(req.headers["content-length"] ?? Number.NaN);
  if (!req.complete && !(announced > 2 * limit)) await drain(req, meter, 2 * limit);
  return httpProblem("payload_too_large", detail, { Connection: "close" });
}
