// Applies prisma/migrations/*/migration.sql in order at start-up, without the Prisma CLI, and
// records them in _prisma_migrations exactly as Prisma does (checksum = sha256 of the file), so
// `prisma migrate status` stays truthful. A session advisory lock lets instances start together.
import { createHash, randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type pg from "pg";

const MIGRATIONS_DIR = fileURLToPath(new URL("../../prisma/migrations", import.meta.url));
const LOCK_KEY = 727_274_001; // arbitrary, fixed: "appsec migrations"

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export async function readMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    }),
  );
}

const CREATE_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

/** Applies pending migrations; returns the names applied. */
export async function migrate(pool: pg.Pool, migrations?: Migration[]): Promise<string[]> {
  const all = migrations ?? (await readMigrations());
  const client = await pool.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [LOCK_KEY]);
    await client.query(CREATE_TABLE);
    const { rows } = await client.query<{ migration_name: string; checksum: string }>(
      `SELECT migration_name, checksum FROM "_prisma_migrations"
        WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    );
    const applied = new Map(rows.map((r) => [r.migration_name, r.checksum]));
    const done: string[] = [];
    for (const m of all) {
      const recorded = applied.get(m.name);
      if (recorded !== undefined) {
        if (recorded !== m.checksum) throw new Error(`Migration ${m.name} was edited after it was applied`);
        continue;
      }
      await client.query("BEGIN");
      try {
        await client.query(m.sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count)
           VALUES ($1, $2, now(), $3, 1)`,
          [randomUUID(), m.checksum, m.name],
        );
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK");
        throw new Error(`Migration ${m.name} failed: ${(err as Error).message}`);
      }
      done.push(m.name);
    }
    return done;
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [LOCK_KEY]).catch(() => {});
    client.release();
  }
}

/** Readiness: every migration in the folder is applied. */
export async function pendingMigrations(pool: pg.Pool, migrations: Migration[]): Promise<string[]> {
  const { rows } = await pool.query<{ migration_name: string }>(
    `SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
  );
  const applied = new Set(rows.map((r) => r.migration_name));
  return migrations.filter((m) => !applied.has(m.name)).map((m) => m.name);
}
