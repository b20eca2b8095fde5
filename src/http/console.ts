// The console (docs/spec/CONTRACT.md §16): the single-page app `npm run build` puts in dist/console, served
// without a token. `/` and every `/console/...` route answer its index.html (the app routes with
// the history API; the HTML is revalidated on every load), `/console/assets/<name>-<hash>.<ext>`
// its content-hashed files, cached for a year as immutable. Only the files the build listed are
// served, read into memory once: no path from a request ever reaches the file system.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type Koa from "koa";
import { sendProblem } from "./middleware/errors.ts";
import { CONSOLE_CSP } from "./middleware/security-headers.ts";
import { withSignIn, type ConsoleSignIn } from "./console-sign-in.ts";
import { problem } from "./problem.ts";

export const CONSOLE_DIR = fileURLToPath(new URL("../../dist/console/", import.meta.url));
const ASSET_PREFIX = "/console/assets/";

interface Encoded {
  identity: Buffer;
  br?: Buffer;
  gzip?: Buffer;
}

interface Asset extends Encoded {
  type: string;
}

/** What console/build.ts writes next to the bundle: each served file and its precompressed forms. */
export interface ConsoleManifest {
  index: string;
  assets: { name: string; type: string; encodings: ("br" | "gzip")[] }[];
}

interface LoadedConsole {
  index: Asset & { etag: string };
  assets: Map<string, Asset>;
}

function readEncoded(file: string, encodings: readonly ("br" | "gzip")[]): Encoded {
  const encoded: Encoded = { identity: readFileSync(file) };
  if (encodings.includes("br")) encoded.br = readFileSync(`${file}.br`);
  if (encodings.includes("gzip")) encoded.gzip = readFileSync(`${file}.gz`);
  return encoded;
}

export function loadConsole(dir = CONSOLE_DIR, signIn?: ConsoleSignIn): LoadedConsole | undefined {
  let manifest: ConsoleManifest;
  try {
    manifest = JSON.parse(readFileSync(`${dir}manifest.json`, "utf8")) as ConsoleManifest;
  } catch {
    return undefined;
  }
  const assets = new Map(
    manifest.assets.map(
      (a) => [a.name, { type: a.type, ...readEncoded(`${dir}assets/${a.name}`, a.encodings) }] as const,
    ),
  );
  const index = { identity: Buffer.from(withSignIn(readFileSync(`${dir}${manifest.index}`, "utf8"), signIn)) };
  const etag = `"${createHash("sha256").update(index.identity).digest("base64url").slice(0, 27)}"`;
  return { index: { ...index, type: "text/html; charset=utf-8", etag }, assets };
}

const isConsolePage = (path: string) =>
  path === "/" || path === "/console" || (path.startsWith("/console/") && !path.startsWith(ASSET_PREFIX));

function send(ctx: Koa.Context, asset: Asset) {
  ctx.vary("Accept-Encoding");
  const encoding = asset.br || asset.gzip ? ctx.acceptsEncodings("br", "gzip", "identity") : "identity";
  const body = (encoding === "br" && asset.br) || (encoding === "gzip" && asset.gzip) || asset.identity;
  if (body !== asset.identity) ctx.set("Content-Encoding", encoding as string);
  ctx.type = asset.type;
  ctx.body = body;
}

export function consoleMiddleware(loaded = loadConsole(), csp: () => string = () => CONSOLE_CSP): Koa.Middleware {
  return async (ctx, next) => {
    const page = isConsolePage(ctx.path);
    if (!page && !ctx.path.startsWith(ASSET_PREFIX)) return next();
    ctx.set("Content-Security-Policy", csp());
    if (ctx.method !== "GET" && ctx.method !== "HEAD") {
      ctx.set("Allow", "GET, HEAD");
      return sendProblem(ctx, problem("method_not_allowed", `${ctx.method} is not allowed on ${ctx.path}`));
    }
    if (!loaded) return sendProblem(ctx, problem("not_found", "The console is not built: run npm run build"));
    if (page) {
      ctx.set("Cache-Control", "no-cache");
      ctx.set("ETag", loaded.index.etag);
      ctx.status = 200;
      if (ctx.fresh) {
        ctx.status = 304;
        return;
      }
      return send(ctx, loaded.index);
    }
    const asset = loaded.assets.get(ctx.path.slice(ASSET_PREFIX.length));
    if (!asset) return sendProblem(ctx, problem("not_found", `No console asset at ${ctx.path}`));
    ctx.set("Cache-Control", "public, max-age=31536000, immutable");
    send(ctx, asset);
  };
}
