// Builds the console into dist/console (run by `npm run build`, hence by `npm ci`'s prepare):
//   1. esbuild bundles it into content-hashed files, each also written brotli- and gzip-compressed;
//   2. index.html names those files, and manifest.json lists what the service may serve.
// Checking is `npm run typecheck`'s business, as for the server: its GraphQL documents against
// schema.graphql (gql.tada), then the project's types.
// Nothing is done when no input changed since the last build.
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import * as esbuild from "esbuild";
import type { ConsoleManifest } from "../src/http/console.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const CONSOLE = path.join(ROOT, "console");
const OUT = path.join(ROOT, "dist/console");
const STAMP = path.join(OUT, "inputs.sha256");

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)],
  );
}

function inputsHash(): string {
  const hash = createHash("sha256");
  const files = [...filesUnder(CONSOLE), path.join(ROOT, "schema.graphql"), path.join(ROOT, "package-lock.json")]
    .filter((f) => !f.endsWith("graphql-env.d.ts"))
    .sort();
  for (const file of files) hash.update(path.relative(ROOT, file)).update("\0").update(readFileSync(file)).update("\0");
  return hash.digest("hex");
}

const TYPES: Record<string, string> = {
  ".js": "application/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
};

async function bundle(): Promise<ConsoleManifest> {
  rmSync(OUT, { recursive: true, force: true });
  const assetsDir = path.join(OUT, "assets");
  const result = await esbuild.build({
    entryPoints: [path.join(CONSOLE, "src/main.tsx")],
    bundle: true,
    splitting: true,
    format: "esm",
    minify: true,
    sourcemap: false,
    target: "es2022",
    jsx: "automatic",
    jsxImportSource: "preact",
    outdir: assetsDir,
    entryNames: "[name]-[hash]",
    chunkNames: "chunk-[hash]",
    assetNames: "[name]-[hash]",
    loader: { ".svg": "file" },
    define: { "process.env.NODE_ENV": '"production"' },
    metafile: true,
    legalComments: "none",
    logLevel: "warning",
  });
  const outputs = Object.keys(result.metafile.outputs).map((file) => path.resolve(ROOT, file));
  const favicon = copyHashed(path.join(CONSOLE, "favicon.svg"), assetsDir);
  const names = [...outputs.map((f) => path.basename(f)), favicon];
  const main = names.find((n) => /^main-.*\.js$/.test(n))!;
  const style = names.find((n) => /^main-.*\.css$/.test(n));
  const url = (name: string) => `/console/assets/${name}`;
  // The chunks the entry imports statically are fetched at once, not after the entry is parsed.
  const mainOutput = Object.entries(result.metafile.outputs).find(([file]) => path.basename(file) === main)![1];
  const preloads = mainOutput.imports.filter((i) => i.kind === "import-statement").map((i) => path.basename(i.path));
  const html = readFileSync(path.join(CONSOLE, "index.html"), "utf8")
    .replace("<!-- favicon -->", `<link rel="icon" type="image/svg+xml" href="${url(favicon)}" />`)
    .replace("<!-- style -->", style ? `<link rel="stylesheet" href="${url(style)}" />` : "")
    .replace(
      "<!-- script -->",
      [
        `<script type="module" src="${url(main)}"></script>`,
        ...preloads.map((p) => `<link rel="modulepreload" href="${url(p)}" />`),
      ].join("\n    "),
    );
  writeFileSync(path.join(OUT, "index.html"), html);

  const assets: ConsoleManifest["assets"] = names.map((name) => {
    const file = path.join(assetsDir, name);
    const body = readFileSync(file);
    const compressible = !name.endsWith(".png");
    if (compressible) {
      writeFileSync(`${file}.br`, brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
      writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
    }
    return {
      name,
      type: TYPES[path.extname(name)] ?? "application/octet-stream",
      encodings: compressible ? ["br", "gzip"] : [],
    };
  });
  const manifest: ConsoleManifest = { index: "index.html", assets };
  writeFileSync(path.join(OUT, "manifest.json"), JSON.stringify(manifest, null, 2));
  return manifest;
}

function copyHashed(file: string, dir: string): string {
  const body = readFileSync(file);
  const hash = createHash("sha256").update(body).digest("base64url").slice(0, 8).toUpperCase().replace(/[-_]/g, "X");
  const name = `${path.basename(file, path.extname(file))}-${hash}${path.extname(file)}`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, name), body);
  return name;
}

const inputs = inputsHash();
const upToDate = (() => {
  try {
    return statSync(STAMP).isFile() && readFileSync(STAMP, "utf8") === inputs;
  } catch {
    return false;
  }
})();
if (!upToDate || process.argv.includes("--force")) {
  const started = performance.now();
  const manifest = await bundle();
  writeFileSync(STAMP, inputs);
  console.error(
    `console: built ${manifest.assets.length} files into dist/console in ${Math.round(performance.now() - started)} ms`,
  );
}
