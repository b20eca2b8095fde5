import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { Prisma, PrismaClient } from "../generated/prisma/client.ts";
import { keepBackendMemoryMapped } from "./backend-memory.ts";
import { createPool, type PoolMode } from "./pool-mode.ts";

export type Db = PrismaClient;
export type Tx = Prisma.TransactionClient;

export interface Database {
  prisma: Db;
  /** Plain pg pool for what Prisma does not do: hot-path SQL. */
  pool: pg.Pool;
  /**
   * Where LISTEN connections go (db/listen.ts): DATABASE_DIRECT_URL when set, since a transaction
   * pooler cannot keep a LISTEN (it lasts the session), else the pools' URL.
   */
  listenOn: string;
  /**
   * The webhook dispatcher's own connections, whose statements are planned for the tables as they
   * are at each execution (custom plans): its queue tables grow by tens of thousands of rows in a
   * second, and a plan cached while they were small (a sequential scan, a hash join) would then
   * scan the whole table for every batch until autovacuum next analyzes it. Its own pool also keeps
   * the API's load from holding up deliveries, and the other way round.
   */
  queuePool: pg.Pool;
  /**
   * Ends the connections in use right now (requests still running when the shutdown's grace period
   * is over): Postgres rolls back the transaction each had open, so none of them is half-written.
   */
  endConnectionsInUse(): void;
  close(): Promise<void>;
}

/** The clients `pool` has lent out and not yet taken back. */
function clientsInUse(pool: pg.Pool): Set<pg.PoolClient> {
  const inUse = new Set<pg.PoolClient>();
  pool.on("acquire", (client) => inUse.add(client));
  pool.on("release", (_err: Error | undefined, client: pg.PoolClient) => inUse.delete(client));
  return inUse;
}

const QUEUE_POOL_SIZE = 5; // fan-out, claims, outcomes, the retry schedule, and the lease release
/**
 * How long taking a connection may wait (opening one, or for a free one): without a bound, a
 * database that stopped answering (not refusing: a network partition) would hold every request
 * until TCP gives up; with it they fail, as connection errors, and are answered 503 (docs/spec/CONTRACT.md §15).
 */
const CONNECTION_TIMEOUT_MS = 3000;
/**
 * Idle connections are kept, not closed after pg-pool's default 10 s: a new one costs a backend's
 * start and its memory warm-up (backend-memory.ts), 50–90 ms on a busy small VM, and a pool shrunk
 * in a quiet spell paid it again at the next burst, in the middle of the requests and the live
 * events' reads that met it (bench/notes/2026-11-28-pools-keep-connections.md). A pool grows to its
 * `max` at most, as before.
 */
const NEVER_CLOSE_IDLE = 0; // pg-pool: 0 turns its closing of idle clients off

export interface DatabaseOptions {
  /** The connections `pool` may lend at once. */
  max?: number;
  /** What `url` is (pool-mode.ts): a session (the default), or a transaction pooler. */
  poolMode?: PoolMode;
  /** A session connection's URL for LISTEN (DATABASE_DIRECT_URL); `url` when absent. */
  directUrl?: string;
}

export function openDatabase(url: string, options: DatabaseOptions = {}): Database {
  const mode = options.poolMode ?? "session";
  const pool = createPool(
    {
      connectionString: url,
      max: options.max ?? 10,
      connectionTimeoutMillis: CONNECTION_TIMEOUT_MS,
      idleTimeoutMillis: NEVER_CLOSE_IDLE,
      onConnect: keepBackendMemoryMapped,
    },
    mode,
  );
  const queuePool = createPool(
    {
      connectionString: url,
      max: QUEUE_POOL_SIZE,
      connectionTimeoutMillis: CONNECTION_TIMEOUT_MS,
      idleTimeoutMillis: NEVER_CLOSE_IDLE,
      onConnect: keepBackendMemoryMapped,
      // A transaction pooler refuses the startup option (PgBouncer: "unsupported startup parameter"),
      // and its unnamed statements are planned with their values at each execution anyway.
      ...(mode === "session" && { options: "-c plan_cache_mode=force_custom_plan" }),
    },
    mode,
  );
  // A client's error (e.g. the server restarting) must not crash the process. The pool listens on
  // idle clients only; a checked-out client's lost connection also rejects its query, which is what
  // its holder handles, but emitted with no listener the error would be thrown.
  for (const p of [pool, queuePool]) {
    p.on("error", () => {});
    p.on("connect", (client) => client.on("error", () => {}));
  }
  const prisma = new PrismaClient({ adapter: new ReleasingPrismaPg(pool) });
  const inUse = [clientsInUse(pool), clientsInUse(queuePool)];
  return {
    prisma,
    pool,
    listenOn: options.directUrl ?? url,
    queuePool,
    endConnectionsInUse() {
      // pg ends a client busy with a query by destroying its socket, so this never waits on that query.
      for (const client of inUse.flatMap((clients) => [...clients])) client.end().catch(() => {});
    },
    async close() {
      await prisma.$disconnect();
      await Promise.all([pool.end(), queuePool.end()]);
    },
  };
}

type Adapter = Awaited<ReturnType<PrismaPg["connect"]>>;
type Transaction = Awaited<ReturnType<Adapter["startTransaction"]>>;

/**
 * @prisma/adapter-pg 6.19 leaks a pool connection when COMMIT or ROLLBACK itself fails (the
 * connection died: the database restarted or went away): Prisma's transaction manager then never
 * calls the transaction's commit() or rollback(), which is what hands the connection back. After an
 * outage or two every connection of the pool would belong to a dead transaction and the service would
 * not come back. This one discards the connection when that happens.
 */
class ReleasingPrismaPg extends PrismaPg {
  override async connect(): Promise<Adapter> {
    const adapter = await super.connect();
    const startTransaction = adapter.startTransaction.bind(adapter);
    adapter.startTransaction = async (isolationLevel) => {
      const tx = await startTransaction(isolationLevel);
      const executeRaw = tx.executeRaw.bind(tx);
      tx.executeRaw = async (query) => {
        try {
          return await executeRaw(query);
        } catch (err) {
          if (/^(COMMIT|ROLLBACK)$/i.test(query.sql.trim())) discard(tx, err);
          throw err;
        }
      };
      return tx;
    };
    return adapter;
  }
}

function discard(tx: Transaction, err: unknown): void {
  const { client, cleanup } = tx as unknown as { client: pg.PoolClient; cleanup?: () => void };
  cleanup?.();
  client.release(err instanceof Error ? err : new Error(String(err)));
}

/** True when err is Prisma's unique-constraint violation (P2002). */
export const isUniqueViolation = (err: unknown): boolean =>
  err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2002";

/** True when err is a foreign-key violation, Prisma's (P2003) or pg's (SQLSTATE 23503): what it points at is gone. */
export const isForeignKeyViolation = (err: unknown): boolean =>
  (err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2003") ||
  (err instanceof pg.DatabaseError && err.code === "23503");
