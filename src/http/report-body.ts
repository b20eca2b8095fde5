// Reads a document sent as the request's body: a scanner report (docs/spec/CONTRACT.md §11) or a VEX (§13).
// JSON under one of the route's media types, optionally gzip-compressed, up to a limit once
// decompressed.
import { createGunzip } from "node:zlib";
import type Koa from "koa";
import getRawBody from "raw-body";
import { invalid } from "../errors.ts";
import { meterBody, payloadTooLarge } from "./body-limit.ts";
import { hasBody } from "./json-body.ts";
import { httpProblem } from "./problem.ts";

export const MAX_REPORT_BYTES = 50 * 1024 * 1024;
export const REPORT_MEDIA_TYPES = ["application/json", "application/sarif+json", "application/vnd.cyclonedx+json"];

export interface DocumentBody {
  /** What the document is, for the answers: "report", "VEX document". */
  what: string;
  mediaTypes: readonly string[];
  /** Bytes, decompressed. */
  limit: number;
}

const REPORT_BODY: DocumentBody = { what: "report", mediaTypes: REPORT_MEDIA_TYPES, limit: MAX_REPORT_BYTES };

const mebibytes = (bytes: number) => `${bytes / (1024 * 1024)} MiB`;

async function readBytes(ctx: Koa.Context, body: DocumentBody): Promise<Buffer> {
  const encoding = ctx.get("Content-Encoding").trim().toLowerCase();
  if (encoding !== "" && encoding !== "identity" && encoding !== "gzip") {
    throw httpProblem(
      "unsupported_media_type",
      `A ${body.what} may be sent as it is or gzip-compressed (Content-Encoding: gzip)`,
    );
  }
  const meter = meterBody(ctx.req);
  const source = encoding === "gzip" ? ctx.req.pipe(createGunzip()) : ctx.req;
  try {
    // The length announced is that of the compressed bytes; the limit holds for what they expand to.
    return await getRawBody(source, {
      limit: body.limit,
      length: encoding === "gzip" ? undefined : ctx.get("Content-Length") || undefined,
    });
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === "entity.too.large") {
      throw await payloadTooLarge(
        ctx.req,
        meter,
        body.limit,
        `A ${body.what} may be at most ${mebibytes(body.limit)} (uncompressed)`,
      );
    }
    if (type === "request.size.invalid")
      throw httpProblem("malformed_json", "Request body length does not match Content-Length");
    if ((err as { code?: string }).code?.startsWith("Z_"))
      throw httpProblem("malformed_json", "The body is not valid gzip");
    throw httpProblem("malformed_json", "Request body could not be read");
  }
}

/** The document's bytes, decompressed. */
export async function readDocumentBody(ctx: Koa.Context, body: DocumentBody): Promise<Buffer> {
  if (!hasBody(ctx))
    throw invalid(`The request has no ${body.what}`, [
      { path: "", message: `Send the ${body.what} as the request body` },
    ]);
  if (!ctx.is(...body.mediaTypes))
    throw httpProblem("unsupported_media_type", `A ${body.what} must be sent as ${body.mediaTypes.join(", ")}`);
  return readBytes(ctx, body);
}

/** The report's bytes, decompressed; parsing them is read-report-off-thread.ts's work. */
export const readReportBody = (ctx: Koa.Context): Promise<Buffer> => readDocumentBody(ctx, REPORT_BODY);
