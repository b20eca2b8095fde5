// Webhook secrets at rest (docs/spec/CONTRACT.md §10): AES-256-GCM under WEBHOOK_SECRET_KEYS, the first key
// seals, every key opens, so keys rotate by putting a new one first. A stored value names its key
// by a short fingerprint and is bound to its subscription's id (the GCM additional data), so a
// sealed secret copied onto another row does not open there.
//
//   v1:<key id>:<iv>:<ciphertext>:<tag>   (base64url parts)
//   plain:<secret>                        only what the migration left; sealed at start-up
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

const SEALED = "v1";
const PLAIN = "plain";
const IV_BYTES = 12;
export const SECRET_KEY_BYTES = 32;

export class SecretKeyUnavailable extends Error {}

export interface SecretBox {
  /** The fingerprint of the key that seals. */
  readonly sealingKeyId: string;
  seal(secret: string, webhookId: string): string;
  /** The secret in clear; throws SecretKeyUnavailable when no configured key opens it. */
  open(stored: string, webhookId: string): string;
  /** Which key a stored value is sealed with; `plain` when it is not sealed. */
  keyIdOf(stored: string): string;
}

/** A short public name for a key: enough to tell keys apart, nothing about the key itself. */
export const keyIdOf = (key: Buffer): string => createHash("sha256").update(key).digest("base64url").slice(0, 8);

const additionalData = (webhookId: string) => Buffer.from(`webhook:${webhookId}`);

export function createSecretBox(keys: readonly Buffer[]): SecretBox {
  if (keys.length === 0) throw new Error("WEBHOOK_SECRET_KEYS: at least one key is needed to seal webhook secrets");
  for (const key of keys)
    if (key.length !== SECRET_KEY_BYTES) throw new Error(`webhook secret keys are ${SECRET_KEY_BYTES} bytes`);
  const byId = new Map(keys.map((key) => [keyIdOf(key), key]));
  const sealingKey = keys[0]!;
  const sealingKeyId = keyIdOf(sealingKey);

  return {
    sealingKeyId,
    seal(secret, webhookId) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", sealingKey, iv).setAAD(additionalData(webhookId));
      const ciphertext = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
      return [SEALED, sealingKeyId, iv, ciphertext, cipher.getAuthTag()]
        .map((part) => (typeof part === "string" ? part : part.toString("base64url")))
        .join(":");
    },
    open(stored, webhookId) {
      if (stored.startsWith(`${PLAIN}:`)) return stored.slice(PLAIN.length + 1);
      const [version, keyId, iv, ciphertext, tag] = stored.split(":");
      const key = version === SEALED && keyId !== undefined ? byId.get(keyId) : undefined;
      if (!key || iv === undefined || ciphertext === undefined || tag === undefined) {
        throw new SecretKeyUnavailable(
          `no configured WEBHOOK_SECRET_KEYS key opens this secret (sealed with key ${keyId ?? "?"})`,
        );
      }
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"))
          .setAAD(additionalData(webhookId))
          .setAuthTag(Buffer.from(tag, "base64url"));
        return Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString(
          "utf8",
        );
      } catch {
        throw new SecretKeyUnavailable(`the secret sealed with key ${keyId} does not authenticate (altered or moved)`);
      }
    },
    keyIdOf(stored) {
      return stored.startsWith(`${PLAIN}:`) ? PLAIN : (stored.split(":")[1] ?? "?");
    },
  };
}
