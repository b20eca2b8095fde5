// What DATABASE_URL is (DATABASE_POOL_MODE): a Postgres session, or a transaction pooler
// (PgBouncer's pool_mode = transaction, RDS Proxy, Supavisor's transaction mode), which hands each
// transaction to whichever server connection is free. There a statement prepared under a name on
// one server connection is unknown on the next (26000) or already there from another client
// (42P05), so the pools of a transaction pooler send every statement unnamed: pg then parses, binds
// and runs it in one round trip, and Postgres plans it with its values, as a custom plan.
import pg from "pg";

export const POOL_MODES = ["session", "transaction"] as const;
export type PoolMode = (typeof POOL_MODES)[number];

/** A query's config without its `name`; anything else (text, a submittable) as it is. */
function unnamed(config: unknown): unknown {
  if (typeof config !== "object" || config === null || !("name" in config) || "submit" in config) return config;
  const { name: _prepared, ...rest } = config as pg.QueryConfig;
  return rest;
}

/** pg's client with every statement sent unnamed. */
class UnnamedStatementsClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    const query = this.query.bind(this) as (...args: unknown[]) => unknown;
    this.query = ((config: unknown, ...rest: unknown[]) => query(unnamed(config), ...rest)) as pg.Client["query"];
  }
}

/** A database as a thread other than the pool's reaches it: its URL and what that URL is. */
export interface DatabaseAddress {
  url: string;
  poolMode: PoolMode;
}

const modes = new WeakMap<pg.Pool, PoolMode>();

/** A pool for `mode`'s connections (see above); `addressOf` tells it later. */
export function createPool(config: pg.PoolConfig, mode: PoolMode): pg.Pool {
  const pool = new pg.Pool(mode === "transaction" ? { ...config, Client: UnnamedStatementsClient } : config);
  modes.set(pool, mode);
  return pool;
}

/** Where `pool` connects, and the mode it was created for ("session" for a pool made elsewhere). */
export const addressOf = (pool: pg.Pool): DatabaseAddress => ({
  url: pool.options.connectionString!,
  poolMode: modes.get(pool) ?? "session",
});
