// A VEX document's statements as the rows that keep them (kept-statements.ts), as JSON text a chunk
// at a time. Pure, so that a worker thread builds a large document's (vex-transaction.ts).
import { createHash } from "node:crypto";
import { newId } from "../../ids.ts";
import { chunksOf } from "../chunks.ts";
import { STATUS_OF_STATE } from "./analysis.ts";
import type { VexStatement } from "./vex-statement.ts";

/** Rows per statement. */
const CHUNK = 2_500;

/** Same vulnerability ids and products, same key: the later statement replaces the earlier. */
const keyOf = (s: Pick<VexStatement, "ids" | "products">) =>
  createHash("sha256")
    .update(JSON.stringify([[...s.ids].sort(), s.products && [...s.products].sort()]))
    .digest("base64url");

export function keptStatementRows(statements: readonly VexStatement[]): string[] {
  // Within one document the last statement of a key is the one in force.
  const latest = new Map<string, VexStatement>();
  for (const s of statements) latest.set(keyOf(s), s);
  const rows = [...latest].map(([key, s]) => ({
    id: newId(),
    key,
    ids: s.ids,
    products: s.products,
    decision: s.decision,
    status: STATUS_OF_STATE[s.decision.state],
  }));
  return [...chunksOf(rows, CHUNK)].map((chunk) => JSON.stringify(chunk));
}
