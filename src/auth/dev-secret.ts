import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * The zero-setup default signs tokens with a generated secret kept under .data/, so a restart
 * keeps issued tokens valid. Never used in production (config refuses to start without a key).
 */
export function loadOrCreateDevSecret(dataDir: string): string {
  const file = path.join(dataDir, "dev-jwt-secret");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString("base64url");
  writeFileSync(file, secret + "\n", { mode: 0o600 });
  return secret;
}
