// At start-up, every stored webhook secret not sealed with the current sealing key is sealed with it:
// the rows the migration left in clear, and after a rotation the ones under an older key, so the
// older key can then be removed. Each row is rewritten only if it still holds what was read, so a
// secret changed meanwhile through the API is never overwritten with the old one.
import type pg from "pg";
import type { SecretBox } from "./secret-box.ts";

export class UnopenableSecrets extends Error {}

const BATCH = 500;

/** Returns how many secrets were sealed anew. */
export async function resealWebhookSecrets(pool: pg.Pool, box: SecretBox): Promise<number> {
  const { rows } = await pool.query<{ id: string; sealed_secret: string }>(
    "SELECT id, sealed_secret FROM webhooks WHERE NOT starts_with(sealed_secret, $1)",
    [`v1:${box.sealingKeyId}:`],
  );
  const unopenable = new Map<string, number>();
  const resealed: { id: string; from: string; to: string }[] = [];
  for (const row of rows) {
    let secret: string;
    try {
      secret = box.open(row.sealed_secret, row.id);
    } catch {
      const keyId = box.keyIdOf(row.sealed_secret);
      unopenable.set(keyId, (unopenable.get(keyId) ?? 0) + 1);
      continue;
    }
    resealed.push({ id: row.id, from: row.sealed_secret, to: box.seal(secret, row.id) });
  }
  if (unopenable.size > 0) {
    const counts = [...unopenable].map(([keyId, n]) => `${n} sealed with key ${keyId}`).join(", ");
    throw new UnopenableSecrets(
      `WEBHOOK_SECRET_KEYS cannot open ${counts}: add that key back (after the sealing key) until start-up has resealed them`,
    );
  }
  let count = 0;
  for (let i = 0; i < resealed.length; i += BATCH) {
    const batch = resealed.slice(i, i + BATCH);
    const result = await pool.query(
      `UPDATE webhooks w SET sealed_secret = r.sealed_to
         FROM unnest($1::uuid[], $2::text[], $3::text[]) AS r(id, sealed_from, sealed_to)
        WHERE w.id = r.id AND w.sealed_secret = r.sealed_from`,
      [batch.map((r) => r.id), batch.map((r) => r.from), batch.map((r) => r.to)],
    );
    count += result.rowCount ?? 0;
  }
  return count;
}
