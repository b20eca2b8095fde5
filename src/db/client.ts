import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { Prisma, PrismaClient } from "../generated/prisma/client.ts";

export type Db = PrismaClient;
export type Tx = Prisma.TransactionClient;

export interface Database {
  prisma: Db;
  /** Plain pg pool for what Prisma does not do: migrations, LISTEN, hot-path SQL. */
  pool: pg.Pool;
  close(): Promise<void>;
}

export function openDatabase(url: string, options: { max?: number } = {}): Database {
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10 });
  // An idle client's error (e.g. the server restarting) must not crash the process.
  pool.on("error", () => {});
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return {
    prisma,
    pool,
    async close() {
      await prisma.$disconnect();
      await pool.end();
    },
  };
}

/** True when err is Prisma's unique-constraint violation (P2002). */
export const isUniqueViolation = (err: unknown): boolean =>
  err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2002";

/** True when err is Prisma's foreign-key violation (P2003): what it points at is gone. */
export const isForeignKeyViolation = (err: unknown): boolean =>
  err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2003";
