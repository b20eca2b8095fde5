// Webhook secrets at rest (docs/spec/CONTRACT.md §10): sealed with AES-256-GCM under WEBHOOK_SECRET_KEYS, never
// in clear in the database, rotated by putting a new key first, and secrets stored in clear before
// the migration sealed at the next start-up.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { migrate, readMigrations } from "../../src/db/migrate.ts";
import { UnopenableSecrets } from "../../src/domain/webhooks/reseal-secrets.ts";
import { createSecretBox, keyIdOf } from "../../src/domain/webhooks/secret-box.ts";
import { newId } from "../../src/ids.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { startTestApp } from "../helpers/test-app.ts";

const SEALING_MIGRATION = "20261123230000_sealed_webhook_secrets";

const newKey = () => randomBytes(32);
const keysEnv = (...keys: Buffer[]) => ({ WEBHOOK_SECRET_KEYS: keys.map((k) => k.toString("base64")).join(",") });

let database: TestDatabase;
let pool: pg.Pool;
beforeEach(async () => {
  database = await createTestDatabase();
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
});
afterEach(async () => {
  await pool.end();
  await database.drop();
});

/** Every column of every subscription, as a dump would show them. */
const dumpedWebhooks = async () =>
  (await pool.query<{ row: string }>("SELECT row_to_json(w)::text AS row FROM webhooks w")).rows
    .map((r) => r.row)
    .join("\n");
const storedSecret = async (id: string) =>
  (await pool.query<{ sealed_secret: string }>("SELECT sealed_secret FROM webhooks WHERE id = $1", [id])).rows[0]!
    .sealed_secret;

async function createWebhook(env: Record<string, string>, secret: string): Promise<string> {
  const t = await startTestApp(env, { database });
  try {
    const res = await t.request("POST", "/webhooks", {
      body: { name: `hook-${newId()}`, url: "https://hooks.example.com/x", events: ["scan.completed"], secret },
    });
    expect(res.status).toBe(201);
    return res.body.id;
  } finally {
    await t.close();
  }
}

it("stores no secret in clear, and an update seals the new one", async () => {
  const k1 = newKey();
  const secret = "whsec-dump-me-if-you-can-✓";
  const id = await createWebhook(keysEnv(k1), secret);

  const dump = await dumpedWebhooks();
  expect(dump).not.toContain(secret);
  expect(dump).not.toContain(Buffer.from(secret).toString("base64"));
  expect(dump).not.toContain(Buffer.from(secret).toString("hex"));
  expect(await storedSecret(id)).toMatch(new RegExp(`^v1:${keyIdOf(k1)}:`));
  expect(createSecretBox([k1]).open(await storedSecret(id), id)).toBe(secret);

  const t = await startTestApp(keysEnv(k1), { database });
  try {
    expect((await t.request("PUT", `/webhooks/${id}`, { body: { secret: "rotated-secret-value" } })).status).toBe(200);
    expect(await dumpedWebhooks()).not.toContain("rotated-secret-value");
    expect(t.app.webhookSecrets.open(await storedSecret(id), id)).toBe("rotated-secret-value");
  } finally {
    await t.close();
  }
});

it("rotates: a new first key reseals every secret at start-up, then the old key can go", async () => {
  const [k1, k2] = [newKey(), newKey()];
  const a = await createWebhook(keysEnv(k1), "secret-a");
  const b = await createWebhook(keysEnv(k1), "secret-b");

  const rotated = await startTestApp(keysEnv(k2, k1), { database });
  await rotated.close();
  for (const [id, secret] of [
    [a, "secret-a"],
    [b, "secret-b"],
  ] as const) {
    expect(await storedSecret(id)).toMatch(new RegExp(`^v1:${keyIdOf(k2)}:`));
    expect(createSecretBox([k2]).open(await storedSecret(id), id)).toBe(secret);
  }

  const newOnly = await startTestApp(keysEnv(k2), { database });
  await newOnly.close();
});

it("refuses to start, naming the key, when no configured key opens a stored secret", async () => {
  const [k1, k2] = [newKey(), newKey()];
  await createWebhook(keysEnv(k1), "secret-a");
  await createWebhook(keysEnv(k1), "secret-b");

  const started = startTestApp(keysEnv(k2), { database });
  await expect(started).rejects.toThrow(UnopenableSecrets);
  await expect(started).rejects.toThrow(`cannot open 2 sealed with key ${keyIdOf(k1)}`);
  expect(String(await started.catch((e) => e.message))).not.toContain(k1.toString("base64"));
});

it("secrets stored in clear before the migration are sealed at the next start-up", async () => {
  // An empty database, migrated up to the migration that seals, holding a clear secret.
  await pool.query("DROP SCHEMA public CASCADE; CREATE SCHEMA public");
  const migrations = await readMigrations();
  const sealing = migrations.findIndex((m) => m.name === SEALING_MIGRATION);
  expect(sealing).toBeGreaterThan(0);
  await migrate(pool, migrations.slice(0, sealing));
  const id = newId();
  await pool.query(
    `INSERT INTO webhooks (id, name, url, events, secret, status, created_at, updated_at)
     VALUES ($1, 'legacy', 'https://hooks.example.com/x', '{scan.completed}', 'legacy-clear-secret', 'active', now(), now())`,
    [id],
  );
  await migrate(pool, migrations);
  expect(await storedSecret(id)).toBe("plain:legacy-clear-secret");

  const k1 = newKey();
  const t = await startTestApp(keysEnv(k1), { database });
  await t.close();
  expect(await dumpedWebhooks()).not.toContain("legacy-clear-secret");
  expect(createSecretBox([k1]).open(await storedSecret(id), id)).toBe("legacy-clear-secret");
});
