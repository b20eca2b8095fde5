// One statement, run in a transaction that either side opened: Prisma's interactive transaction
// (a scan recording its findings) or a pg client that began one (a VEX apply, in a worker thread
// that loads no Prisma). The writers of rows shared by both (decisions, events, kept statements)
// take either; their statements are plain text with $1… parameters.
import type pg from "pg";
import type { Tx } from "./client.ts";

export type SqlRunner = Tx | pg.ClientBase;

export async function runSql(runner: SqlRunner, text: string, values: unknown[]): Promise<void> {
  if ("$executeRawUnsafe" in runner) await runner.$executeRawUnsafe(text, ...values);
  else await runner.query(text, values);
}
