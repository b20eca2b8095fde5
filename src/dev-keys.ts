import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { SECRET_KEY_BYTES } from "./domain/webhooks/secret-box.ts";

/**
 * The zero-setup default generates its keys once and keeps them under .data/, so a restart keeps
 * issued tokens valid and stored webhook secrets readable. Never used in production (config
 * refuses to start without configured keys).
 */
function loadOrCreate(dataDir: string, name: string, generate: () => string): string {
  const file = path.join(dataDir, name);
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(dataDir, { recursive: true });
  const value = generate();
  writeFileSync(file, value + "\n", { mode: 0o600 });
  return value;
}

/** Signs development tokens (HS256). */
export const loadOrCreateDevJwtSecret = (dataDir: string): string =>
  loadOrCreate(dataDir, "dev-jwt-secret", () => randomBytes(32).toString("base64url"));

/** Seals webhook secrets at rest, as WEBHOOK_SECRET_KEYS would. */
export const loadOrCreateDevWebhookKey = (dataDir: string): Buffer =>
  Buffer.from(
    loadOrCreate(dataDir, "dev-webhook-secret-key", () => randomBytes(SECRET_KEY_BYTES).toString("base64")),
    "base64",
  );
