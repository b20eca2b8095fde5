import type { Actor } from "../../auth/scopes.ts";
import type { Db, Tx } from "../../db/client.ts";
import { notFound } from "../../errors.ts";
import { isId } from "../../ids.ts";
import { viewerTeams, visibleApplicationsWhere } from "../access/viewer.ts";

/**
 * For operations nested under /applications/{id}: 404 for an unknown or malformed id, and for an
 * application `actor` may not see (docs/spec/CONTRACT.md §17), so that its existence does not leak.
 */
export async function requireApplication(db: Db | Tx, actor: Actor, id: string): Promise<void> {
  const found = isId(id)
    ? await db.application.findFirst({ where: { id, ...visibleApplicationsWhere(actor) }, select: { id: true } })
    : null;
  if (!found) throw notFound("Application");
}

/**
 * For writes whose foreign key already answers 404 for an unknown application: only a confined
 * caller needs the application looked up, to learn whether it may see it.
 */
export async function requireApplicationIfConfined(db: Db | Tx, actor: Actor, id: string): Promise<void> {
  if (viewerTeams(actor) !== null) await requireApplication(db, actor, id);
}
