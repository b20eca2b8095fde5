// Which VEX statement decides which vulnerability (docs/spec/CONTRACT.md §13): a statement matches the
// vulnerabilities known by one of its ids (aliases included) and, when it names products, whose
// package is one of them (package-match.ts). Of several statements matching one vulnerability
// the latest wins (madeAt, then the order they came in).
import { nextTurn } from "../next-turn.ts";
import { packageMatches, productKey, type ProductKey } from "./package-match.ts";
import type { VexStatement } from "./vex-statement.ts";

/** What matching needs of a statement. */
export type MatchingStatement = Pick<VexStatement, "ids" | "products" | "madeAt">;

/** What matching needs of a vulnerability: its ids and its package (the package URL in its location). */
export interface Matchable {
  aliases: readonly string[];
  location: string | null;
}

export interface Matching<S, V> {
  /** Each matched vulnerability and the statement that decides it. */
  decided: Map<V, S>;
  /** The statements that matched at least one vulnerability. */
  matched: Set<S>;
}

/** Statements matched between two turns of the event loop. */
const SLICE = 100;

export async function matchStatements<S extends MatchingStatement, V extends Matchable>(
  statements: readonly S[],
  vulnerabilities: readonly V[],
): Promise<Matching<S, V>> {
  const byId = new Map<string, V[]>();
  for (const v of vulnerabilities) {
    for (const id of v.aliases) {
      const known = byId.get(id);
      if (known) known.push(v);
      else byId.set(id, [v]);
    }
  }
  const packages = new Map<V, ProductKey | null>();
  const packageOf = (v: V) => {
    if (!packages.has(v)) packages.set(v, v.location ? productKey(v.location) : null);
    return packages.get(v)!;
  };
  // Stable: statements made at the same moment keep the order they came in.
  const inOrder = statements.map((s, i) => ({ s, i })).sort((a, b) => a.s.madeAt - b.s.madeAt || a.i - b.i);
  const decided = new Map<V, S>();
  const matched = new Set<S>();
  for (const [i, { s }] of inOrder.entries()) {
    if (i > 0 && i % SLICE === 0) await nextTurn();
    const candidates = new Set(s.ids.flatMap((id) => byId.get(id) ?? []));
    for (const v of candidates) {
      if (s.products !== null && !packageMatches(packageOf(v), s.products)) continue;
      matched.add(s);
      decided.set(v, s);
    }
  }
  return { decided, matched };
}
