// Live scan events (scanUpdated) laid over the scans a query returned. A scan only moves forward
// (queued → running → completed | failed) and ids are time-ordered (UUIDv7), so whichever of the
// two is further along wins, whatever order the query and the events arrived in.
import { graphql, type ResultOf } from "./graphql.ts";

export const ScanUpdated = graphql(`
  subscription ScanUpdated($applicationId: ID, $after: String) {
    scanUpdated(applicationId: $applicationId, after: $after) {
      cursor
      id
      applicationId
      scanType
      status
      triggeredBy
      startedAt
      completedAt
      summary {
        totalFindings
        critical
        high
        medium
        low
      }
    }
  }
`);

export type ScanEvent = ResultOf<typeof ScanUpdated>["scanUpdated"];

const RANK: Record<string, number> = { QUEUED: 0, RUNNING: 1, COMPLETED: 2, FAILED: 2 };

/** Whether `event` says more about the scan than `known` does (the same scan further along). */
export const isAhead = (known: { id: string; status: string }, event: { id: string; status: string }) =>
  event.id === known.id && RANK[event.status]! > RANK[known.status]!;

/** The latest scan per type of an application: the query's, unless an event is newer or further along. */
export function latestOf<S extends { id: string; status: string; scanType: string }>(
  known: S | undefined,
  event: ScanEvent | undefined,
): S | ScanEvent | undefined {
  if (!event) return known;
  if (!known || event.id > known.id) return event;
  return isAhead(known, event) ? { ...known, ...event } : known;
}

/** Every event, latest per scan id (the furthest along). */
export function remember(events: ReadonlyMap<string, ScanEvent>, event: ScanEvent): Map<string, ScanEvent> {
  const previous = events.get(event.id);
  if (previous && !isAhead(previous, event)) return events as Map<string, ScanEvent>;
  return new Map(events).set(event.id, event);
}
