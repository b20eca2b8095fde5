import type { Db, Tx } from "../../db/client.ts";
import { notFound } from "../../errors.ts";
import { isId } from "../../ids.ts";

/** For operations nested under /applications/{id}: an unknown or malformed id is 404. */
export async function requireApplication(db: Db | Tx, id: string): Promise<void> {
  const found = isId(id) ? await db.application.findUnique({ where: { id }, select: { id: true } }) : null;
  if (!found) throw notFound("Application");
}
