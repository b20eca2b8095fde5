// Reads a JSON request body with the limits of docs/spec/CONTRACT.md §2: 413 over 1 MiB (exactly 1 MiB is
// fine), 415 for a body that is not JSON, 400 for malformed JSON.
import type Koa from "koa";
import getRawBody from "raw-body";
import { meterBody, payloadTooLarge } from "./body-limit.ts";
import { httpProblem } from "./problem.ts";

export const MAX_BODY_BYTES = 1024 * 1024;

export function hasBody(ctx: Koa.Context): boolean {
  const length = ctx.get("Content-Length");
  return ctx.get("Transfer-Encoding") !== "" || (length !== "" && length !== "0");
}

/** The raw body as text, at most 1 MiB whether or not the client announced its length. */
export async function readBodyText(ctx: Koa.Context): Promise<string> {
  const meter = meterBody(ctx.req);
  try {
    return await getRawBody(ctx.req, {
      limit: MAX_BODY_BYTES,
      encoding: "utf8",
      length: ctx.get("Content-Length") || undefined,
    });
  } catch (err) {
    const type = (err as { type?: string }).type;
    // The rest of the body is not read whole, so the connection cannot carry another request.
    if (type === "entity.too.large")
      throw await payloadTooLarge(ctx.req, meter, MAX_BODY_BYTES, "Request body exceeds 1 MiB");
    if (type === "request.size.invalid")
      throw httpProblem("malformed_json", "Request body length does not match Content-Length");
    throw httpProblem("malformed_json", "Request body could not be read");
  }
}

/** The parsed body, or undefined when the request has none (services then report what is missing). */
export async function readJsonBody(ctx: Koa.Context): Promise<unknown> {
  if (!hasBody(ctx)) return undefined;
  if (!ctx.is("application/json", "application/*+json")) {
    throw httpProblem("unsupported_media_type", "Request bodies must be application/json");
  }
  const charset = ctx.request.charset;
  if (charset && charset.toLowerCase() !== "utf-8" && charset.toLowerCase() !== "utf8") {
    throw httpProblem("unsupported_media_type", "Request bodies must be UTF-8 encoded");
  }
  const text = await readBodyText(ctx);
  try {
    return JSON.parse(text);
  } catch {
    throw httpProblem("malformed_json", "Request body is not valid JSON");
  }
}
