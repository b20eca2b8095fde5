// GraphiQL in development, served entirely by the service: Yoga's own build of it
// (@graphql-yoga/render-graphiql ships GraphiQL, Monaco and its workers as strings) is split into
// content-hashed files under /graphiql/, and the page starts it from one of them, so it works
// offline and under a Content-Security-Policy that allows no inline script and no other origin.
// Yoga's default page loads the same code from a CDN (and shows only "Loading…" offline).
import { createHash } from "node:crypto";
import type { GraphiQLOptions } from "graphql-yoga";
import type Koa from "koa";
import { sendProblem } from "../http/middleware/errors.ts";
import { GRAPHIQL_CSP } from "../http/middleware/security-headers.ts";
import { problem } from "../http/problem.ts";

const PREFIX = "/graphiql/";

// Reads the options and worker URLs the page put on #root (no inline script can carry them).
const START = `"use strict";
const root = document.getElementById("root");
const { workers, options } = JSON.parse(root.dataset.graphiql);
self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (_moduleId, label) => workers[label] };
YogaGraphiQL.renderYogaGraphiQL(root, options);
`;

interface File {
  name: string;
  type: string;
  body: Buffer;
}

interface Files {
  byName: Map<string, File>;
  /** Hashed name of each part. */
  script: string;
  style: string;
  start: string;
  favicon: string;
  workers: Record<"editorWorkerService" | "json" | "graphql", string>;
}

function hashed(stem: string, ext: string, type: string, body: Buffer): File {
  const hash = createHash("sha256").update(body).digest("base64url").slice(0, 12);
  return { name: `${stem}-${hash}.${ext}`, type, body };
}

let files: Promise<Files> | undefined;

/** Nine megabytes of strings: loaded on the first visit, never in production. */
function loadFiles(): Promise<Files> {
  files ??= import("@graphql-yoga/render-graphiql/graphiql").then((g) => {
    const js = "application/javascript; charset=utf-8";
    const favicon = /^data:([^;]+);base64,(.*)$/.exec(g.favicon);
    const parts = {
      script: hashed("yoga-graphiql", "js", js, Buffer.from(g.js)),
      style: hashed("yoga-graphiql", "css", "text/css; charset=utf-8", Buffer.from(g.css)),
      start: hashed("start", "js", js, Buffer.from(START)),
      favicon: hashed("favicon", "ico", favicon?.[1] ?? "image/x-icon", Buffer.from(favicon?.[2] ?? "", "base64")),
      editorWorkerService: hashed("editor.worker", "js", js, Buffer.from(g.editorWorkerService)),
      json: hashed("json.worker", "js", js, Buffer.from(g.jsonWorker)),
      graphql: hashed("graphql.worker", "js", js, Buffer.from(g.graphqlWorker)),
    };
    const url = (f: File) => PREFIX + f.name;
    return {
      byName: new Map(Object.values(parts).map((f) => [f.name, f])),
      script: url(parts.script),
      style: url(parts.style),
      start: url(parts.start),
      favicon: url(parts.favicon),
      workers: {
        editorWorkerService: url(parts.editorWorkerService),
        json: url(parts.json),
        graphql: url(parts.graphql),
      },
    };
  });
  return files;
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** Yoga's `renderGraphiQL`: the page, with no inline script or style. */
export async function renderLocalGraphiQL(options: GraphiQLOptions): Promise<string> {
  const f = await loadFiles();
  const data = escapeHtml(JSON.stringify({ workers: f.workers, options }));
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(options.title ?? "GraphiQL")}</title>
    <link rel="icon" href="${f.favicon}" />
    <link rel="stylesheet" href="${f.style}" />
    <script defer src="${f.script}"></script>
    <script defer src="${f.start}"></script>
  </head>
  <body class="no-focus-outline">
    <noscript>GraphiQL needs JavaScript.</noscript>
    <div id="root" data-graphiql="${data}"></div>
  </body>
</html>
`;
}

/** The page's files under /graphiql/ (content-hashed, immutable); the page itself is at /graphql. */
export function graphiqlAssets(): Koa.Middleware {
  return async (ctx, next) => {
    if (!ctx.path.startsWith(PREFIX)) return next();
    ctx.set("Content-Security-Policy", GRAPHIQL_CSP);
    if (ctx.method !== "GET" && ctx.method !== "HEAD") {
      ctx.set("Allow", "GET, HEAD");
      return sendProblem(ctx, problem("method_not_allowed", `${ctx.method} is not allowed on ${ctx.path}`));
    }
    const file = (await loadFiles()).byName.get(ctx.path.slice(PREFIX.length));
    if (!file) return sendProblem(ctx, problem("not_found", `No GraphiQL file at ${ctx.path}`));
    ctx.set("Cache-Control", "public, max-age=31536000, immutable");
    ctx.type = file.type;
    ctx.body = file.body;
  };
}
