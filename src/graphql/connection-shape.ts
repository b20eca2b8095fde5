// Relay connections over the domain's keyset pages, as values: `first`/`after` are REST's
// `limit`/`cursor` (same limits, same opaque cursors), validated by the same function. Their
// GraphQL types are in connection.ts.
import { parsePageRequest, encodeCursor, type Page, type PageRequest } from "../domain/pagination.ts";
import { DomainError } from "../errors.ts";

export interface ConnectionArgs {
  first?: number | null;
  after?: string | null;
}

const ARG_OF_PARAM: Record<string, string> = { limit: "first", cursor: "after" };

export function pageRequestOf(args: ConnectionArgs): PageRequest {
  try {
    return parsePageRequest({ limit: args.first, cursor: args.after });
  } catch (err) {
    if (err instanceof DomainError && err.details.errors) {
      err.details.errors = err.details.errors.map((e) => ({ ...e, path: ARG_OF_PARAM[e.path] ?? e.path }));
    }
    throw err;
  }
}

export interface ConnectionShape<T> {
  edges: { cursor: string; node: T }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  /** Counted only when the query asks for it. */
  totalCount: () => Promise<number>;
}

// Classes rather than object literals with getters: a dashboard builds hundreds of edges per
// request, and literals with accessors are built the slow way, one closure per getter.
class Edge<T extends { createdAt: Date; id: string }> {
  constructor(readonly node: T) {}

  /** Encoded only when asked for: a dashboard rarely reads one per edge. */
  get cursor(): string {
    return encodeCursor(this.node);
  }
}

class PageInfo<T extends { createdAt: Date; id: string }> {
  constructor(
    private readonly edges: readonly Edge<T>[],
    readonly hasNextPage: boolean,
    readonly hasPreviousPage: boolean,
  ) {}

  get startCursor(): string | null {
    return this.edges[0]?.cursor ?? null;
  }

  get endCursor(): string | null {
    return this.edges.at(-1)?.cursor ?? null;
  }
}

/** A page as a Relay connection without a count (for lists the domain does not count). */
export function toPlainConnection<T extends { createdAt: Date; id: string }>(
  page: Page<T>,
  after: string | undefined,
): Omit<ConnectionShape<T>, "totalCount"> {
  const edges = page.items.map((node) => new Edge(node));
  return { edges, pageInfo: new PageInfo(edges, page.hasMore, after !== undefined) };
}

export function toConnection<T extends { createdAt: Date; id: string }>(
  page: Page<T>,
  after: string | undefined,
  totalCount: () => Promise<number>,
): ConnectionShape<T> {
  return { ...toPlainConnection(page, after), totalCount };
}
