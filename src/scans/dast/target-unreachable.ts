// The one way a baseline scan fails: its target gave no answer at all to the first request (or the
// target policy forbade asking).
import type { FetchFailureKind } from "./fetch-page.ts";

export class TargetUnreachableError extends Error {
  constructor(
    /** forbidden (the target policy), dns, refused, timeout, tls or connection. */
    readonly kind: FetchFailureKind,
    /** A reason a person can act on, e.g. "http://10.0.0.5:8080 refused the connection". */
    readonly reason: string,
  ) {
    super(reason);
    this.name = "TargetUnreachableError";
  }
}
