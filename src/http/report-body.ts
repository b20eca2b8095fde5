// Reads a scanner report from the request (CONTRACT §11): JSON under one of the report media types,
// optionally gzip-compressed, up to 50 MiB once decompressed.
import { createGunzip } from "node:zlib";
import type Koa from "koa";
import getRawBody from "raw-body";
import { invalid } from "../errors.ts";
import { hasBody } from "./json-body.ts";
import { httpProblem } from "./problem.ts";

export const MAX_REPORT_BYTES = 50 * 1024 * 1024;
export const REPORT_MEDIA_TYPES = ["application/json", "application/sarif+json", "application/vnd.cyclonedx+json"];

async function readBytes(ctx: Koa.Context): Promise<Buffer> {
  const encoding = ctx.get("Content-Encoding").trim().toLowerCase();
  if (encoding !== "" && encoding !== "identity" && encoding !== "gzip") {
    throw httpProblem("unsupported_media_type", "Reports may be sent as they are or gzip-compressed (Content-Encoding: gzip)");
  }
  const source = encoding === "gzip" ? ctx.req.pipe(createGunzip()) : ctx.req;
  try {
    // The length announced is that of the compressed bytes; the limit holds for what they expand to.
    return await getRawBody(source, { limit: MAX_REPORT_BYTES, length: encoding === "gzip" ? undefined : ctx.get("Content-Length") || undefined });
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === "entity.too.large") throw httpProblem("payload_too_large", "Reports may be at most 50 MiB (uncompressed)", { Connection: "close" });
    if (type === "request.size.invalid") throw httpProblem("malformed_json", "Request body length does not match Content-Length");
    if ((err as { code?: string }).code?.startsWith("Z_")) throw httpProblem("malformed_json", "The body is not valid gzip");
    throw httpProblem("malformed_json", "Request body could not be read");
  }
}

/** The report's bytes, decompressed; parsing them is read-report-off-thread.ts's work. */
export async function readReportBody(ctx: Koa.Context): Promise<Buffer> {
  if (!hasBody(ctx)) throw invalid("The request has no report", [{ path: "", message: "Send the report as the request body" }]);
  if (!ctx.is(...REPORT_MEDIA_TYPES)) throw httpProblem("unsupported_media_type", `Reports must be sent as ${REPORT_MEDIA_TYPES.join(", ")}`);
  return readBytes(ctx);
}
