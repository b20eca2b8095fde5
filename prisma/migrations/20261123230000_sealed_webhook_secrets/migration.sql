-- Webhook secrets are kept sealed (AES-256-GCM, src/domain/webhooks/secret-box.ts). The key lives
-- outside the database, so SQL cannot seal: existing secrets are marked `plain:` here and sealed by
-- the service at its next start-up, before it sends anything.
ALTER TABLE "webhooks" RENAME COLUMN "secret" TO "sealed_secret";
UPDATE "webhooks" SET "sealed_secret" = 'plain:' || "sealed_secret";
