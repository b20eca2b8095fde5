// GraphQL arguments → the REST-shaped objects the domain services validate.
import { invalid } from "../errors.ts";

/** A plain object with the supplied fields only: omitted stays omitted, explicit null stays null. */
export function restShaped(input: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
}

/** Lists are newest-first keyset pages: forward paging only, as in REST. */
export function rejectBackwardPaging(args: { last?: number | null; before?: string | null }): void {
  const errors = [
    ...(args.last != null ? [{ path: "last", message: "Backward paging is not supported; use first/after" }] : []),
    ...(args.before != null ? [{ path: "before", message: "Backward paging is not supported; use first/after" }] : []),
  ];
  if (errors.length) throw invalid("Invalid pagination parameters", errors);
}
