// Prisma CLI configuration: Migrate runs on the Wasm schema engine through a driver adapter, so
// no native engine is downloaded (these machines cannot reach its host; see TOOLCHAIN.md).
import { defineConfig } from "prisma/config";
import { MigratePg } from "./prisma/migrate-adapter.ts";
import { EMBEDDED_DATABASE_URL } from "./src/db/embedded-url.ts";

// `prisma generate` needs a URL even on a fresh clone; the embedded database's is the default.
process.env.DATABASE_URL ??= EMBEDDED_DATABASE_URL;

// The Wasm engine leaves 10 s / 60 s timers armed after finishing; without unref the CLI would
// idle for a minute before exiting.
const armTimer = globalThis.setTimeout;
globalThis.setTimeout = ((handler: (...a: unknown[]) => void, ms?: number, ...rest: unknown[]) => {
  const timer = armTimer(handler, ms, ...rest);
  if ((ms ?? 0) >= 10_000) timer.unref();
  return timer;
}) as typeof setTimeout;

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  experimental: { adapter: true },
  engine: "js",
  adapter: async () => new MigratePg(process.env.DATABASE_URL!),
});
